"""Capítulo 5: recortar el gradiente de cada persona, no el de todo el lote (``recorte-por-persona``)."""

from __future__ import annotations

from typing import Mapping

import numpy as np

from ..._checks import describe
from .toolkit import _Findings, Verdict, _call, _num, _require_function, _run, seeded_rng


# ----------------------------------------- capítulo 5: recortar por persona --

CLIP_NORMS = (1.0, 2.5)


def _gradient_fixture() -> np.ndarray:
    """Per-person gradients: large, small, zero, opposite signs, and 24 seeded ones (uniform, not noise)."""
    fixed = np.array([[3.0, 4.0, 0.0], [0.3, 0.4, 0.0], [0.0, 0.0, 0.0], [-6.0, 8.0, 0.0],
                      [0.5, -0.5, 0.5], [3.0, 0.5, -0.2], [0.0, -9.0, 0.0]])
    seeded = seeded_rng(50).uniform(-3.0, 3.0, size=(24, 3))
    return np.vstack([fixed, seeded])


def check_per_person_clipping(defined: Mapping) -> Verdict:
    """Capítulo 5: `recortar(gradientes, *, C)` lleva cada fila a norma L2 ≤ C: gᵢ·min(1, C/‖gᵢ‖₂).

    Con 31 gradientes de 3 componentes (grandes, pequeños, uno cero) y C = 1 y
    2,5 comprueba, fila por fila y con error ≤ 10⁻⁹: una fila por persona;
    ninguna norma pasa de C; las filas con norma ≤ C no cambian; las demás
    conservan la dirección y quedan con norma C; un gradiente cero sigue cero
    (sin NaN). Así la suma tiene sensibilidad L2 igual a C.

    Errores que reconoce: recortar la suma (una sola fila), recortar cada
    coordenada (`np.clip`), recortar por otra norma (L1, L∞), llevar todas las
    filas a norma C (agranda las pequeñas), un C fijo, saltarse la última fila,
    dividir por cero.
    Referencia: Abadi et al. (2016), Algoritmo 1; Near y Abuah (2021), cap. 11.
    """
    name = "recortar"

    def body(findings: _Findings) -> None:
        function = _require_function(findings, defined, name, "gradientes, *, C")
        gradients = _gradient_fixture()
        norms = np.linalg.norm(gradients, axis=1)
        for clip_norm in CLIP_NORMS:
            given = gradients.copy()
            output = _call(findings, function, name, given, C=clip_norm)
            case = f"C = {_num(clip_norm, None)}"
            try:
                clipped = np.asarray(output, dtype=float)
            except (TypeError, ValueError):
                findings.fail(f"`{name}` devuelve {describe(output)}; se espera una matriz como `gradientes`.",
                              stop=True)
            if clipped.shape != gradients.shape:
                if clipped.shape in ((gradients.shape[1],), (1, gradients.shape[1])):
                    findings.fail(f"Con {case} devuelves un solo vector: recortas la suma. Recorta el "
                                  "gradiente de cada persona (cada fila) y deja la suma para después.", stop=True)
                findings.fail(f"Con {case} devuelves forma {clipped.shape}; se espera {gradients.shape}, "
                              "una fila por persona.", stop=True)
            if not np.all(np.isfinite(clipped)):
                rows = [int(i) for i in np.flatnonzero(~np.all(np.isfinite(clipped), axis=1))]
                zero = any(norms[i] == 0 for i in rows)
                findings.fail(f"Con {case} aparecen NaN o infinitos" +
                              (" en la persona con gradiente cero: divides por ‖g‖ = 0. Usa min(1, C/‖g‖) "
                               "con cuidado (por ejemplo, divide por max(‖g‖, C))." if zero else "."), stop=True)
            out_norms = np.linalg.norm(clipped, axis=1)
            small = norms <= clip_norm
            over = out_norms > clip_norm * (1 + 1e-9)
            if np.any(over):
                index = int(np.argmax(out_norms))
                right = gradients * np.minimum(1.0, clip_norm / np.maximum(norms, 1e-300))[:, None]
                largest = np.max(np.abs(gradients), axis=1)
                reason = (
                    " Recortas cada coordenada por separado: el recorte es de la norma L2 de la fila entera, "
                    "gᵢ·min(1, C/‖gᵢ‖₂)." if np.allclose(clipped, np.clip(gradients, -clip_norm, clip_norm)) else
                    " Recortas por la norma L∞ (el mayor |gᵢⱼ| de la fila): el recorte es por la norma L2, "
                    "`np.linalg.norm(g)`." if np.allclose(
                        clipped, gradients * np.minimum(1.0, clip_norm / np.maximum(largest, 1e-300))[:, None]) else
                    f" Las demás filas están bien y la última ({len(gradients) - 1}) no cambia: ¿tu bucle se salta a "
                    "la última persona (`range(len(g) − 1)`)?" if np.allclose(clipped[:-1], right[:-1])
                    and np.allclose(clipped[-1], gradients[-1]) else "")
                findings.fail(f"Con {case} la fila {index} queda con norma {_num(out_norms[index])} > C." + reason,
                              stop=True)
            findings.ok(f"Con {case} ninguna persona queda con norma mayor que C.")
            if not np.allclose(clipped[small], gradients[small], rtol=1e-9, atol=1e-12):
                grown = np.allclose(out_norms[norms > 0], clip_norm, rtol=1e-9)
                fixed = [bound for bound in CLIP_NORMS if bound != clip_norm and np.allclose(
                    clipped, gradients * np.minimum(1.0, bound / np.maximum(norms, 1e-300))[:, None])]
                l1 = np.allclose(clipped, gradients * np.minimum(
                    1.0, clip_norm / np.maximum(np.abs(gradients).sum(axis=1), 1e-300))[:, None])
                reason = (" Llevas todas las filas a norma C: el recorte solo achica, min(1, C/‖gᵢ‖)." if grown
                          else f" Recortas a {_num(fixed[0], None)}: usa el C que recibe la función." if fixed
                          else " Recortas por la norma L1 (Σ|gᵢⱼ|): el recorte es por la norma L2, "
                               "`np.linalg.norm(g)`; con L1 achicas filas que ya cumplían." if l1
                          else " Usas la norma de cada columna (`axis=0`): la de cada persona es la de su fila, "
                               "`np.linalg.norm(g, axis=1)`." if np.allclose(clipped, gradients * np.minimum(
                                   1.0, clip_norm / np.maximum(np.linalg.norm(gradients, axis=0), 1e-300)))
                          else "")
                findings.fail(f"Con {case} cambias gradientes que ya tenían norma ≤ C.{reason}", stop=True)
            findings.ok(f"Con {case} los gradientes pequeños (norma ≤ C) no cambian.")
            big = ~small
            directions = np.einsum("ij,ij->i", clipped[big], gradients[big]) / (out_norms[big] * norms[big])
            kept = np.allclose(directions, 1.0, atol=1e-9) and np.allclose(out_norms[big], clip_norm, rtol=1e-9)
            squared = np.allclose(clipped, gradients * np.minimum(
                1.0, clip_norm / np.maximum(norms ** 2, 1e-300))[:, None])
            findings.expect(kept,
                            f"Con {case} los gradientes grandes conservan su dirección y quedan con norma C.",
                            f"Con {case} algún gradiente grande cambia de dirección o no queda con norma C: "
                            "reescala la fila entera, gᵢ·C/‖gᵢ‖₂." +
                            (" Divides por ‖gᵢ‖² (la suma de cuadrados, sin la raíz): la norma es su raíz."
                             if squared else ""), stop=True)
        if not np.array_equal(given, gradients):
            findings.ok("(Ojo: tu función modifica el arreglo que recibe; no cambia la privacidad, "
                        "pero es más seguro devolver uno nuevo.)")

    return _run("recorte-por-persona", body)
