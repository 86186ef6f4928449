"""Los ejercicios de la clase: una comprobación por ejercicio, con veredicto en español.

Cada ejercicio de las diapositivas es una celda con código de partida que el
estudiante completa (``check=NOMBRE`` en la diapositiva). Al pulsar
«Comprobar», la celda se ejecuta y la comprobación de ``CHECKS[NOMBRE]``
recibe lo que la celda definió (su espacio de nombres) y devuelve un
``Verdict``: una lista de hallazgos, cada uno bien o mal, con una frase en
español que dice qué está bien, qué falta y, si reconoce el error típico
(ε/Δ en vez de Δ/ε, una suma sin recortar, recortar la suma en lugar de cada
persona…), cuál es.

Las comprobaciones estadísticas llaman a la función del estudiante miles de
veces con un generador de semilla fija (el veredicto es reproducible) y miden
el ruido con pruebas de falsa alarma acotada (``FALSE_ALARM``, 10⁻⁶ cada una:
una implementación correcta casi nunca falla): su centro, su escala y su cola
lejana, donde un ruido recortado o de otra forma se delata.

En el navegador, el *worker* llama a ``run_check(código, check=…)``, que
ejecuta la celda con ``dpdeck.classroom.cellrun.run_cell`` y aplica la comprobación a su
espacio de nombres. La comprobación corre con dpdeck, numpy y las funciones
de Python tal como se importaron (``cellrun.run_untouched``: lo que la celda
les cambió se deshace antes), y si el código del estudiante, que ella llama,
los cambia mientras tanto, el veredicto dice que la comprobación no vale. Es
una autoevaluación en el navegador del estudiante, no una nota: lo que se
califica es el laboratorio exportado, que quien califica vuelve a ejecutar con
``python -m dpdeck.lab --extension``. En un cuaderno Jupyter::

    from dpdeck.exercises import check
    check("laplace-escala", globals())

Un módulo por capítulo (``laplace``, ``budget``, ``clipped_sum``,
``gaussian``, ``per_person_clipping``, ``federated``) y uno para el reto
(``lab_challenge``), todos sobre ``toolkit``: el veredicto, las semillas y las
pruebas estadísticas comunes. Este paquete es el registro (``CHECKS``) y reúne
los nombres públicos; los cuadernos lo importan como ``dpdeck.exercises``.

El reto del laboratorio (``reto-laboratorio``) comprueba la extensión
``student_extension`` contra un laboratorio corrido con la semilla elegida;
``export_lab`` produce el JSON de ``python -m dpdeck.lab`` con la extensión.
"""

from __future__ import annotations

import contextlib
import io
from typing import Any, Callable, Mapping

from ..cellrun import run_cell, run_untouched
from ..protocol import MAX_FIGURES, MAX_OUTPUT_CHARS, RUN_STATUS
from .budget import check_budget_split
from .clipped_sum import check_clipped_sum
from .federated import check_fedavg_average, check_pairwise_masks
from .gaussian import check_gaussian_sigma
from .lab_challenge import check_lab_extension, export_lab
from .laplace import check_laplace_scale
from .per_person_clipping import check_per_person_clipping
from .toolkit import FALSE_ALARM, Finding, Verdict

__all__ = [
    "FALSE_ALARM",
    "Finding",
    "Verdict",
    "CHECKS",
    "check",
    "run_check",
    "export_lab",
    "check_laplace_scale",
    "check_budget_split",
    "check_clipped_sum",
    "check_gaussian_sigma",
    "check_per_person_clipping",
    "check_fedavg_average",
    "check_pairwise_masks",
    "check_lab_extension",
]


# ------------------------------------------------------------- el registro --

CHECKS: Mapping[str, Callable[[Mapping], Verdict]] = {
    "laplace-escala": check_laplace_scale,
    "presupuesto": check_budget_split,
    "suma-recortada": check_clipped_sum,
    "sigma-gaussiano": check_gaussian_sigma,
    "recorte-por-persona": check_per_person_clipping,
    "promedio-fedavg": check_fedavg_average,
    "mascaras-pares": check_pairwise_masks,
    "reto-laboratorio": check_lab_extension,
}
"""Cada comprobación por su nombre: el que lleva `check=` en la celda del ejercicio."""

# What a check says when the student's code, while it was being checked, changed what the check uses.
TAMPERED_FINDING = ("La comprobación no vale: mientras se comprobaba, tu código cambió {names}, que la "
                    "comprobación usa. Deja dpdeck, numpy y las funciones de Python como están y vuelve a comprobar.")
# At most this many changed names are listed.
TAMPERED_NAMES_SHOWN = 3


def _check_quietly(name: str, namespace: Mapping) -> Verdict:
    """`CHECKS[name](namespace)`; what the student's functions print while it runs is not shown (thousands of calls)."""
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return CHECKS[name](namespace)


def _tampered_verdict(name: str, changed: list[str]) -> Verdict:
    """The verdict of a check whose run the student's code changed: not passed, saying what changed."""
    shown = ", ".join(f"«{item}»" for item in changed[:TAMPERED_NAMES_SHOWN])
    more = f" y {len(changed) - TAMPERED_NAMES_SHOWN} más" if len(changed) > TAMPERED_NAMES_SHOWN else ""
    return Verdict(name, (Finding(False, TAMPERED_FINDING.format(names=shown + more)),))


def check(name: str, namespace: Mapping) -> Verdict:
    """Comprueba el ejercicio ``name`` con lo que definió ``namespace`` (en un cuaderno: ``globals()``)."""
    if name not in CHECKS:
        raise ValueError(f"no hay un ejercicio «{name}»; los ejercicios son: {', '.join(CHECKS)}")
    return CHECKS[name](namespace)


def run_check(
    source: str,
    *,
    check: str,
    cell_id: str = "celda",
    on_output: Callable[[dict], Any] | None = None,
    max_output_chars: int = MAX_OUTPUT_CHARS,
    max_figures: int = MAX_FIGURES,
) -> dict:
    """Ejecuta la celda de un ejercicio y comprueba lo que definió: lo que hace «Comprobar».

    Devuelve el resultado de ``run_cell`` (``status``, ``outputs``) más
    ``verdict`` (``Verdict.as_dict()``), o ``verdict: None`` si la celda no
    terminó bien (su error ya está en ``outputs``). Lo que imprima la función
    del estudiante mientras se comprueba no se muestra: son miles de llamadas.
    """
    if check not in CHECKS:
        raise ValueError(f"no hay un ejercicio «{check}»; los ejercicios son: {', '.join(CHECKS)}")
    holder: dict = {}

    def on_namespace(namespace: dict) -> None:
        # The check runs with dpdeck, numpy and the builtins as they were before
        # any cell (this one's changes undone), and its verdict stands only if
        # the student's code, which it calls, changed none of them meanwhile.
        verdict, changed = run_untouched(_check_quietly, check, namespace)
        holder["verdict"] = _tampered_verdict(check, changed) if changed else verdict

    result = run_cell(source, cell_id=cell_id, on_output=on_output, max_output_chars=max_output_chars,
                      max_figures=max_figures, on_namespace=on_namespace)
    verdict = holder.get("verdict")
    result["verdict"] = verdict.as_dict() if verdict is not None and result["status"] == RUN_STATUS.DONE else None
    return result
