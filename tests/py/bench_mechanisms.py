"""Costo por muestra de los mecanismos discretos exactos y del ataque de punto flotante.

Uso: ``.venv/bin/python tests/py/bench_mechanisms.py [--samples N] [--repeats R]``

Imprime la mediana (y el mínimo) de R corridas, en microsegundos por muestra,
para el Laplace y el Gaussiano discretos (en un arreglo y de a un escalar),
para el Laplace de punto flotante como referencia, y para una prueba
``can_release`` del atacante. Las velocidades se miden aquí; las pruebas no
afirman tiempos.
"""

from __future__ import annotations

import argparse
import statistics
import time
from fractions import Fraction

import numpy as np

from dpdeck import attacks
from dpdeck import mechanisms as m


def per_sample_microseconds(function, samples: int, repeats: int) -> tuple[float, float]:
    runs = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        runs.append((time.perf_counter() - start) / samples * 1e6)
    return statistics.median(runs), min(runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=5)
    arguments = parser.parse_args()
    n, repeats = arguments.samples, arguments.repeats
    rng = np.random.default_rng(0)
    zeros = np.zeros(n, dtype=np.int64)
    releases = m.laplace_mechanism(np.ones(n), sensitivity=1, epsilon=0.5, rng=rng).tolist()
    cases = [
        ("Laplace discreto, t = 2, arreglo", lambda: m.add_discrete_laplace_noise(zeros, scale=2, rng=rng)),
        ("Laplace discreto, t = 10/3, arreglo",
         lambda: m.add_discrete_laplace_noise(zeros, scale=Fraction(10, 3), rng=rng)),
        ("Laplace discreto, t = 1000, arreglo", lambda: m.add_discrete_laplace_noise(zeros, scale=1000, rng=rng)),
        ("Laplace discreto, t = 2, de a un escalar",
         lambda: [m.discrete_laplace_mechanism(0, sensitivity=1, epsilon=0.5, rng=rng) for _ in range(n)]),
        ("Gaussiano discreto, σ² = 4, arreglo", lambda: m.add_discrete_gaussian_noise(zeros, sigma_squared=4, rng=rng)),
        ("Gaussiano discreto, σ² = 10⁶, arreglo",
         lambda: m.add_discrete_gaussian_noise(zeros, sigma_squared=10**6, rng=rng)),
        ("Laplace en punto flotante, b = 2, arreglo (referencia)",
         lambda: m.add_laplace_noise(np.zeros(n), scale=2.0, rng=rng)),
        ("can_release (ataque), desde 0, b = 2",
         lambda: [attacks.can_release(y, 0.0, scale=2.0) for y in releases]),
    ]
    print(f"{n} muestras, mediana (mínimo) de {repeats} corridas, µs por muestra")
    for name, function in cases:
        median, best = per_sample_microseconds(function, n, repeats)
        print(f"  {name:<56} {median:8.2f} ({best:.2f})")


if __name__ == "__main__":
    main()
