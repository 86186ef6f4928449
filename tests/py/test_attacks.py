"""El ataque de punto flotante (Mironov 2012): gana contra Laplace en punto flotante, no contra el discreto.

Cotas: con n ensayos, el acierto medido se aparta del esperado en más de
t = √(ln(2/β)/(2n)) con probabilidad menor que β (Hoeffding); aquí β = 10⁻⁶.
Bajo ε-DP el acierto esperado de cualquier atacante con previa 1/2 es a lo sumo
e^ε/(1 + e^ε) (``attack_success_bound``).
"""

import math
import re
from pathlib import Path

import numpy as np
import pytest

from deckbuild.slides import read_deck
from dpdeck import attacks
from dpdeck import mechanisms as m
from dpdeck.classroom.cellrun import run_cell

FAILURE = 1e-6


def hoeffding_halfwidth(n, failure=FAILURE):
    return math.sqrt(math.log(2.0 / failure) / (2.0 * n))


# ------------------------------------------------ the model of numpy's sampler --


@pytest.mark.parametrize("true_value, scale", [(0.0, 2.0), (1.0, 2.0), (42.0, 2.0), (-3.5, 0.7),
                                               (1e6, 10.0), (0.0, 1e-3), (5.0, 1e3)])
def test_every_release_of_the_float_mechanism_is_found_reachable(true_value, scale):
    """Sin falsos negativos: el atacante jamás descarta el valor verdadero. Si numpy
    cambiara su muestreador, esta prueba lo diría antes que la diapositiva."""
    releases = m.add_laplace_noise(np.full(1500, true_value), scale=scale, rng=np.random.default_rng(11))
    assert all(attacks.can_release(y, true_value, scale=scale) for y in releases.tolist())


def first_reaching_by_bisection(output, true_value, scale, lo, hi):
    """Otra búsqueda, independiente: bisección pura sobre todo el rango de k."""
    release = lambda k: attacks._float_laplace_release(k, true_value, scale)  # noqa: E731
    while hi - lo > 1:
        middle = (lo + hi) // 2
        if release(middle) >= output:
            hi = middle
        else:
            lo = middle
    return hi


def test_unreachable_verdicts_agree_with_an_independent_bisection():
    """Cada «no pudo salir de 0» se confirma con una bisección desde todo el rango de U:
    ningún k cerca del borde da exactamente la salida."""
    releases = m.add_laplace_noise(np.ones(400), scale=2.0, rng=np.random.default_rng(12)).tolist()
    refuted = 0
    for y in releases:
        if attacks.can_release(y, 0.0, scale=2.0):
            continue
        lo, hi = (2**52 - 1, 2**53 - 1) if y > 0 else (0, 2**52 - 1)
        edge = first_reaching_by_bisection(y, 0.0, 2.0, lo, hi)
        assert all(attacks._float_laplace_release(k, 0.0, 2.0) != y for k in range(edge - 3, edge + 4)
                   if 0 < k < 2**53)
        refuted += 1
    assert refuted > 250  # most releases from 1 are impossible from 0


def test_model_reproduces_numpy_bit_for_bit():
    """La fórmula del módulo, con los mismos uniformes, da los mismos dobles que numpy."""
    uniforms = np.random.default_rng(5).random(2000)
    releases = np.random.default_rng(5).laplace(3.0, 2.0, size=2000)
    model = [attacks._float_laplace_release(int(u * 2**53), 3.0, 2.0) for u in uniforms.tolist()]
    assert model == releases.tolist()


# ------------------------------------------------------------ the attack --


def test_attack_beats_the_dp_bound_on_the_float_mechanism():
    """Con conteos 1 y 0 y ε = 0,5, el acierto supera e^ε/(1 + e^ε) ≈ 0,622 por mucho más
    que la tolerancia de Hoeffding: la garantía de ε-DP no se cumple."""
    trials = 2000
    success = attacks.measure_attack_success(m.laplace_mechanism, (1, 0), epsilon=0.5,
                                             trials=trials, rng=np.random.default_rng(2012))
    bound = attacks.attack_success_bound(epsilon=0.5)
    assert success - hoeffding_halfwidth(trials) > bound + 0.15


def test_attack_with_the_hospital_counts_and_more_noise_still_beats_the_bound():
    """Con 42 y 41 el ataque se debilita, pero con ε = 0,1 (más ruido) sigue por encima
    de la cota, que baja a ≈ 0,525: más ruido no cura el problema."""
    trials = 4000
    success = attacks.measure_attack_success(m.laplace_mechanism, (42, 41), epsilon=0.1,
                                             trials=trials, rng=np.random.default_rng(41))
    assert success - hoeffding_halfwidth(trials) > attacks.attack_success_bound(epsilon=0.1)


@pytest.mark.parametrize("true_values, epsilon", [((1, 0), 0.5), ((42, 41), 0.1), ((3, 0), 1.0)])
def test_attack_fails_on_the_discrete_mechanism(true_values, epsilon):
    """Contra el Laplace discreto el atacante nunca descarta un candidato y adivina: su
    acierto está a menos de t de 1/2, y a menos de t de la cota de ε-DP."""
    trials = 2000
    success = attacks.measure_attack_success(m.discrete_laplace_mechanism, true_values,
                                             epsilon=epsilon, trials=trials, rng=np.random.default_rng(7))
    t = hoeffding_halfwidth(trials)
    assert abs(success - 0.5) < t
    assert success < attacks.attack_success_bound(epsilon=epsilon) + t


def test_every_integer_can_come_from_every_integer_under_the_discrete_mechanism():
    releases = m.discrete_laplace_mechanism(np.ones(300, dtype=np.int64), sensitivity=1, epsilon=0.5,
                                            rng=np.random.default_rng(3)).tolist()
    assert all(attacks.can_release(y, x, scale=2.0) for y in releases for x in (0, 1, 42))
    assert not attacks.can_release(3, 0.5, scale=2.0)


def test_the_bound_is_attained_by_the_best_test_on_the_discrete_laplace():
    """Comprobación independiente de e^ε/(1 + e^ε): contra Lap_ℤ(1/ε) con Δ = 1, la mejor
    prueba («f = 1 si y ≥ 1») acierta P(Z ≥ 0) = 1/(1 + e^{−ε}) exacto, en forma cerrada."""
    for epsilon in (0.1, 0.5, 1.0, 3.0):
        q = math.exp(-epsilon)
        p_zero = (1 - q) / (1 + q)
        best = (1 + p_zero) / 2
        assert attacks.attack_success_bound(epsilon=epsilon) == pytest.approx(best, rel=1e-14)
    assert attacks.attack_success_bound(epsilon=0.5) == pytest.approx(0.6225, abs=1e-4)


def test_guess_names_the_only_possible_candidate_and_is_never_wrong_then():
    rng = np.random.default_rng(9)
    for secret in (0, 1):
        releases = m.laplace_mechanism(np.full(300, secret), sensitivity=1, epsilon=0.5, rng=rng).tolist()
        for y in releases:
            possible = [x for x in (1, 0) if attacks.can_release(y, x, scale=2.0)]
            if len(possible) == 1:
                assert attacks.guess_true_value(y, (1, 0), scale=2.0, rng=rng) == secret


# ------------------------------------------------------------- validation --


@pytest.mark.parametrize("output, fragment", [(True, "debe ser un número"), (math.nan, "salida debe ser finito"),
                                              ([1.0, 2.0], "no arreglos"), ("1", "salida debe ser un número")])
def test_can_release_refuses_bad_outputs(output, fragment):
    with pytest.raises(ValueError, match=fragment):
        attacks.can_release(output, 0.0, scale=2.0)


@pytest.mark.parametrize("kwargs, fragment", [
    (dict(true_values=(1, 1)), "dos enteros distintos"),
    (dict(true_values=(1.5, 0)), "dos enteros distintos"),
    (dict(trials=0), "ensayos debe ser un entero positivo"),
    (dict(epsilon=-1), "epsilon debe ser positivo"),
    (dict(rng=None), "numpy.random.Generator"),
])
def test_measure_attack_success_refuses_bad_parameters(kwargs, fragment):
    arguments = dict(true_values=(1, 0), epsilon=0.5, trials=10, rng=np.random.default_rng(0)) | kwargs
    with pytest.raises(ValueError, match=fragment):
        attacks.measure_attack_success(m.laplace_mechanism, **arguments)


# ------------------------------------------------------- the slide's numbers --

SLIDES = Path(__file__).resolve().parents[2] / "deck" / "slides"
CELL_ID = "ataque-punto-flotante"


def attack_slide():
    """(source of the cell, its speaker notes folded to one line), wherever the slide lives."""
    found = [(cell, slide) for slide in read_deck(SLIDES).slides for cell in slide.cells if cell.id == CELL_ID]
    assert len(found) == 1, f"la celda {CELL_ID} debe estar una vez"
    cell, slide = found[0]
    notes = re.search(r"^::: notes\n(.*?)\n:::$", slide.source, re.S | re.M)
    assert notes, f"la diapositiva de {CELL_ID} debe tener notas"
    return cell.source, re.sub(r"\s+", " ", notes.group(1))


def printed(source, **replacements):
    for old, new in replacements.values():
        assert old in source
        source = source.replace(old, new)
    result = run_cell(source, cell_id=CELL_ID)
    assert result["status"] == "done", result["outputs"]
    return "".join(output["text"] for output in result["outputs"] if output["type"] == "stream")


def test_the_cell_prints_what_its_notes_say():
    source, notes = attack_slide()
    output = printed(source)
    assert "laplace_mechanism: acierta 91,1\u00a0%" in output and "acierta el 91,1 %" in notes
    assert "discrete_laplace_mechanism: acierta 49,5\u00a0%" in output and "queda en 49,5 %" in notes
    assert "máximo con ε-DP: 62,2\u00a0%" in output and "≈ 62,2 %" in notes
    assert "¿−0,486" in output and " sale de 1? sí" in output and " sale de 0? no" in output
    assert "−0,486… sale del 1 y no del 0" in notes


def test_the_answer_to_the_class_question_is_what_the_cell_prints():
    """«Con 42 y 41 y ε = 0,5, 52,2 %; con ε = 0,1, 59,9 %, por encima del máximo de 52,5 %»."""
    source, notes = attack_slide()
    counts = ("con, sin = 1, 0 ", "con, sin = 42, 41 ")
    hospital = printed(source, counts=counts)
    assert "laplace_mechanism: acierta 52,2\u00a0%" in hospital and "52,2 %" in notes
    more_noise = printed(source, counts=counts, epsilon=("epsilon, ensayos = 0.5,", "epsilon, ensayos = 0.1,"))
    assert "laplace_mechanism: acierta 59,9\u00a0%" in more_noise and "sube a 59,9 %" in notes
    assert "máximo con ε-DP: 52,5\u00a0%" in more_noise and "máximo de 52,5 %" in notes


def test_more_than_three_in_four_releases_are_impossible_from_the_other_count():
    """«en más de tres de cada cuatro publicaciones la salida es imposible desde el otro
    conteo»: fracción medida en 4000 publicaciones (2000 de cada conteo) menos la
    tolerancia de Hoeffding (falla < 1e-6) por encima de 3/4."""
    _, notes = attack_slide()
    assert "más de tres de cada cuatro publicaciones" in notes
    rng = np.random.default_rng(75)
    exclusive = 0
    for secret, other in ((1, 0), (0, 1)):
        releases = m.laplace_mechanism(np.full(2000, secret), sensitivity=1, epsilon=0.5, rng=rng).tolist()
        exclusive += sum(not attacks.can_release(y, other, scale=2.0) for y in releases)
    assert exclusive / 4000 - hoeffding_halfwidth(4000) > 0.75
