"""Laboratorio reproducible de la clase: cada número de la clase, recalculado con una semilla.

``run_lab(seed)`` recorre los seis capítulos y devuelve un diccionario con el
contrato del laboratorio:

* ``kind``: ``"privacidad-diferencial"``;
* ``seed``: la semilla recibida;
* ``inputs``: las decisiones observables (censo, δ, hiperparámetros);
* ``results``: los números con nombre de cada capítulo (ataque diferencial,
  ejemplo del hospital, factor del gaussiano, las tres contabilidades, cruce
  Laplace–Gauss, pendiente 1/√k, histograma, codo del recorte, promedio
  privado, descenso de gradiente privado…) y, en ``federated``, los del
  capítulo 6 (``dpdeck.lab.federated``);
* ``evidence``: hechos que un lector puede verificar, cada uno con sus
  números y si se cumplen (``holds``). Cada hecho es una medición (sobre
  muestras del mecanismo, sobre el libro de cuentas, contra una fórmula
  exacta) que una implementación equivocada haría falsa: nunca repite una
  entrada;
* ``limitations``: lo que este laboratorio no es.

Misma semilla, mismo JSON byte a byte::

    python -m dpdeck.lab --seed 0

Cada paso recibe su propio generador, derivado de la semilla con
``numpy.random.SeedSequence.spawn``: cambiar un paso no mueve el azar de los
demás.

El reto de la clase extiende el resultado con una clave ``student_extension``:
el supuesto que se prueba, una medición o comprobación, la conclusión y una
limitación (``EXTENSION_FIELDS``), cada una un texto no vacío::

    python -m dpdeck.lab --seed 0 --extension extension.json

``extension.json`` guarda ese objeto de cuatro claves (o un laboratorio ya
exportado que lo tenga en ``student_extension``, como el que exporta el mazo).
La extensión se valida (``check_student_extension``) y se agrega tal cual: no
cambia ningún otro número del laboratorio.

Tres módulos: ``contract`` (las constantes, el reto y el formato del JSON),
``steps`` (los pasos de los capítulos 1–5) y ``federated`` (el del capítulo
6); aquí, el orden de los pasos (``STEPS``), ``run_lab`` y la orden
``python -m dpdeck.lab`` (``main``).
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np

from ..data import load_census
from . import federated as lab_federated
from .contract import (
    DELTA,
    EXTENSION_FIELDS,
    EXTENSION_KEY,
    KIND,
    LIMITATIONS,
    check_seed,
    check_student_extension,
    _plain,
    read_extension_file,
)
from .steps import (
    check_delta_rule,
    choose_bound_privately,
    compare_accountants,
    compute_gaussian_price,
    compute_private_mean,
    describe_census,
    find_clipping_elbow,
    find_vector_crossing,
    measure_averaging,
    measure_differencing_attack,
    measure_histogram,
    measure_local_sensitivity,
    train_private_models,
    work_hospital_example,
)

__all__ = [
    "KIND",
    "DELTA",
    "LIMITATIONS",
    "STEPS",
    "EXTENSION_KEY",
    "EXTENSION_FIELDS",
    "check_seed",
    "check_student_extension",
    "read_extension_file",
    "run_lab",
    "format_lab",
    "main",
]


STEPS = (
    ("census", describe_census),
    ("differencing_attack", measure_differencing_attack),
    ("hospital", work_hospital_example),
    ("averaging", measure_averaging),
    ("histogram", measure_histogram),
    ("clipping", find_clipping_elbow),
    ("private_bound", choose_bound_privately),
    ("mean", compute_private_mean),
    ("local_sensitivity", measure_local_sensitivity),
    ("gaussian", compute_gaussian_price),
    ("delta_rule", check_delta_rule),
    ("vector", find_vector_crossing),
    ("composition", compare_accountants),
    ("learning", train_private_models),
    (lab_federated.STEP, lab_federated.run_lab_chapter),
)
"""Los pasos del laboratorio, en el orden de la clase: (nombre, función(censo, rng))."""


def run_lab(seed=0, *, extension=None) -> dict:
    """Corre todo el laboratorio con ``seed`` y devuelve el contrato como diccionario.

    Claves: ``kind``, ``seed``, ``inputs``, ``results`` (un diccionario por
    paso de ``STEPS``), ``evidence`` (lista de hechos con ``result``,
    ``fact``, ``holds`` y ``values``) y ``limitations``. Solo contiene tipos de
    JSON, con los reales redondeados a 6 cifras significativas: la misma
    semilla da el mismo JSON byte a byte (``format_lab``).

    Con ``extension`` (el reto de la clase), agrega ``student_extension``,
    validada por ``check_student_extension`` antes de correr nada; el resto
    del resultado es el mismo que sin ella.
    """
    seed = check_seed(seed)
    if extension is not None:
        extension = check_student_extension(extension)
    census = load_census()
    streams = np.random.SeedSequence(seed).spawn(len(STEPS))
    results = {}
    evidence = []
    for (name, step), stream in zip(STEPS, streams):
        step_results, step_evidence = step(census, np.random.default_rng(stream))
        results[name] = step_results
        evidence.extend(step_evidence)
    inputs = {
        "census": "dpdeck.data.load_census()",
        "people": len(census),
        "delta": DELTA,
        "rng": "numpy.random.SeedSequence(seed).spawn(pasos)",
        "steps": [name for name, _ in STEPS],
    }
    result = _plain({
        "kind": KIND,
        "seed": seed,
        "inputs": inputs,
        "results": results,
        "evidence": evidence,
        "limitations": LIMITATIONS + lab_federated.LAB_LIMITATIONS,
    })
    if extension is not None:
        result[EXTENSION_KEY] = extension
    return result


def format_lab(result: dict) -> str:
    """El resultado como JSON estable: claves ordenadas, UTF-8 legible, sangría 2."""
    return json.dumps(result, sort_keys=True, ensure_ascii=False, indent=2)


#: What ``--help`` says the lab does (plain text: the terminal shows no reST).
DESCRIPTION = ("Imprime el JSON del laboratorio de la clase: kind, seed, inputs, results, evidence y "
               "limitations, el mismo byte a byte con la misma semilla.")


def main(argv=None) -> int:
    """``python -m dpdeck.lab --seed N [--extension ARCHIVO]``: imprime el JSON del laboratorio."""
    parser = argparse.ArgumentParser(prog="python -m dpdeck.lab", description=DESCRIPTION)
    parser.add_argument("--seed", type=int, default=0, help="semilla (entero ≥ 0; por defecto 0)")
    parser.add_argument("--extension", metavar="ARCHIVO",
                        help="JSON con la extensión del reto (claves: " + ", ".join(EXTENSION_FIELDS) +
                             "), que se agrega como student_extension")
    args = parser.parse_args(argv)
    try:
        extension = read_extension_file(args.extension) if args.extension else None
        result = run_lab(args.seed, extension=extension)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    sys.stdout.write(format_lab(result) + "\n")
    return 0
