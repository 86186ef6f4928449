"""Broken implementations of the library, for the lab's evidence to catch (the sabotage tests).

Each sabotage takes a ``pytest.MonkeyPatch`` and breaks the real code in one
realistic way: it replaces a function (``monkeypatch.setattr``) or mutates one
line of its source (``mutate``: the function is recompiled from its own source
with one fragment replaced, in its own module). Two registries:

* ``FACT_SABOTAGES``: for every evidence item of the lab, (step, index within
  the step) → the sabotages that make that item false at every seed of
  ``SEEDS``;
* ``NAMED_SABOTAGES``: the ways to break differential privacy and secure
  aggregation that the evidence as a whole must catch (some fact false at every
  seed of ``SEEDS``), with the steps where they bite.

``python tests/py/lab/sabotage.py`` prints the table of
``py/dpdeck/lab/README.md`` (fact → the sabotages that make it false);
``python tests/py/lab/sabotage.py NAME…`` prints which facts the named
sabotages make false, seed by seed.
"""

from __future__ import annotations

import inspect
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

if __name__ == "__main__":  # run as a script: the package from this checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "py"))

from dpdeck import accounting, lab, learning, mechanisms, queries
from dpdeck.lab import federated as lab_federated
from dpdeck import federated as fed
from dpdeck.data import load_census
from dpdeck.numbers import format_number
from dpdeck.federated import averaging, leakage, private_training, secure_aggregation

SEEDS = (0, 1, 2)
"""The seeds every sabotage is tried at."""


def breaks(what: str):
    """Names a sabotage in Spanish, for the table of the lab's documentation."""
    def mark(sabotage):
        sabotage.what = what
        return sabotage
    return mark


def replace(monkeypatch, module, name: str, new) -> None:
    """``module.name`` = ``new``, and the same in every module of the package that imported it by name."""
    original = getattr(module, name)
    for holder in [m for key, m in sys.modules.items() if key == "dpdeck" or key.startswith("dpdeck.")]:
        if getattr(holder, name, None) is original:
            monkeypatch.setattr(holder, name, new)


def mutate(monkeypatch, module, name: str, *edits: tuple[str, str]) -> None:
    """Replace ``module.name`` by its own source with each (old, new) edit made (each ``old`` found once)."""
    source = textwrap.dedent(inspect.getsource(getattr(module, name)))
    for old, new in edits:
        assert source.count(old) == 1, f"{module.__name__}.{name} no contiene una vez: {old!r}"
        source = source.replace(old, new)
    code = compile(source, f"<{module.__name__}.{name}, saboteada>", "exec")
    defined: dict = {}
    exec(code, module.__dict__, defined)   # the module's globals: it calls what the module calls
    replace(monkeypatch, module, name, defined[name])


FEDERATED_FACTS = (("fedavg", 4), ("leakage", 4), ("secure_aggregation", 3), ("private_aggregate", 7))
"""How many facts each part of the federated step gives, in the order of ``lab_federated.PARTS``
(``evidence_of`` checks it every time it runs a part)."""


def federated_part(index: int) -> str:
    """The part of the federated step that gives its fact ``index``."""
    start = 0
    for part, facts in FEDERATED_FACTS:
        if index < start + facts:
            return part
        start += facts
    raise ValueError(f"el paso federated no tiene un hecho {index}")


def evidence_of(step_names, seed: int, parts=None) -> list[tuple[str, int, dict]]:
    """The evidence of some steps of the lab, each run with its own stream of ``seed``: (step, index, item).

    The federated step runs part by part, each with the generator it gets in the whole step
    (``lab_federated.run_lab_chapter``): the same facts, with the same index. With ``parts`` (names
    of its parts), only those: a fact of one part costs a fifth to a half of the whole chapter.
    """
    names = [name for name, _ in lab.STEPS]
    streams = np.random.SeedSequence(seed).spawn(len(lab.STEPS))
    found = []
    for step_name in step_names:
        step = dict(lab.STEPS)[step_name]
        stream = streams[names.index(step_name)]
        if step_name != lab_federated.STEP:
            _, evidence = step(load_census(), np.random.default_rng(stream))
            found += [(step_name, index, item) for index, item in enumerate(evidence)]
            continue
        assert [part for part, _ in FEDERATED_FACTS] == [name for name, _ in lab_federated.PARTS]
        start = 0
        for part, facts in FEDERATED_FACTS:
            if parts is None or part in parts:
                _, evidence = step(load_census(), np.random.default_rng(stream), parts=[part])
                assert len(evidence) == facts, f"la parte {part} da {len(evidence)} hechos, no {facts}: FEDERATED_FACTS"
                found += [(step_name, start + index, item) for index, item in enumerate(evidence)]
            start += facts
    return found


# ------------------------------------------------------------ chapters 1–5 --


def scale_laplace_by(factor):
    def sabotage(monkeypatch):
        original = mechanisms.laplace_scale
        replace(monkeypatch, mechanisms, "laplace_scale", lambda **kw: factor * original(**kw))
    sabotage.__name__ = f"laplace_scale_times_{factor:g}".replace(".", "_")
    sabotage.what = f"la escala de Laplace multiplicada por {format_number(factor)}"
    return sabotage


@breaks('un conteo que ignora su condición')
def count_everyone(monkeypatch):
    # A count that ignores its condition: both queries give n, and the difference is 0.
    replace(monkeypatch, queries, "count", lambda condition: int(np.size(condition)))


@breaks('el libro de cuentas no suma las repeticiones')
def ledger_forgets_repetitions(monkeypatch):
    def total(self, *, theorem="sequential", delta=None):
        return sum(release.epsilon for release in self.releases), sum(r.delta for r in self.releases)
    monkeypatch.setattr(accounting.PrivacyLedger, "total", total)


@breaks('el mismo ruido en las k publicaciones')
def repeat_the_same_noise(monkeypatch):
    # Every one of the k releases carries the same noise draw: averaging cannot cancel it.
    original = queries.laplace_mechanism

    def same_noise(value, *, sensitivity, epsilon, rng):
        value = np.asarray(value, dtype=float)
        first = original(value[..., :1], sensitivity=sensitivity, epsilon=epsilon, rng=rng)
        return value + (first - value[..., :1])
    replace(monkeypatch, queries, "laplace_mechanism", same_noise)


@breaks('un histograma acumulado (una persona en varias barras)')
def cumulative_histogram(monkeypatch):
    # «At least this level»: a person is counted in her bar and every bar below it; not parallel.
    original = queries.histogram_counts

    def cumulative(labels, *, categories):
        return np.cumsum(original(labels, categories=categories)[::-1])[::-1]
    replace(monkeypatch, queries, "histogram_counts", cumulative)


@breaks('la suma sin recortar')
def no_value_clipping(monkeypatch):
    replace(monkeypatch, queries, "clip", lambda values, *, bound: np.asarray(values, dtype=float))


@breaks('la búsqueda de la cota no anota lo que gasta')
def search_forgets_its_spend(monkeypatch):
    original = queries.choose_clipping_bound
    replace(monkeypatch, queries, "choose_clipping_bound",
                        lambda values, **kw: original(values, **{**kw, "ledger": None}))


@breaks('la búsqueda de la cota sin su filtro de ruido')
def search_without_the_noise_filter(monkeypatch):
    # Cumulative noisy counts from the top with a two-sd margin, no filter: the margin grows with
    # the number of bars summed and the search stops far below the data's top.
    def choose_once(values, *, epsilon, rng, final_epsilon):
        edges = np.unique(queries.DEFAULT_CLIPPING_CANDIDATES)
        counts = np.bincount(np.searchsorted(edges, values), minlength=edges.size + 1).astype(float)
        noisy = mechanisms.laplace_mechanism(counts, sensitivity=1, epsilon=epsilon, rng=rng)
        above = np.cumsum(noisy[::-1])[::-1][1:]
        margin = 2 * np.sqrt(2 * (edges.size - np.arange(edges.size))) / epsilon
        chosen = edges[np.argmax(above <= 1 / final_epsilon + margin)]
        return queries.ClippingChoice(float(chosen), epsilon)

    def choose(values, *, epsilon, rng, final_epsilon=None, ledger=None, candidates=None, size=None):
        if size is None:
            return choose_once(values, epsilon=epsilon, rng=rng, final_epsilon=final_epsilon)
        return [choose_once(values, epsilon=epsilon, rng=rng, final_epsilon=final_epsilon) for _ in range(size)]
    replace(monkeypatch, queries, "choose_clipping_bound", choose)


@breaks('el promedio gasta ε entero en la suma y en el conteo')
def mean_spends_epsilon_twice(monkeypatch):
    # The sum and the count each get the whole ε instead of half of it.
    original = queries.private_mean
    replace(monkeypatch, queries, "private_mean",
                        lambda values, *, epsilon, **kw: original(values, epsilon=2 * epsilon, **kw))


@breaks('la escala de la sensibilidad global donde se mide la local')
def global_scale_for_the_sum(monkeypatch):
    # Calibrating both bases to the same (public) bound: the leak closes.
    replace(monkeypatch, queries, "local_sensitivity_of_sum", lambda values: 99_999.0)


@breaks('σ del gaussiano sin √(2 ln(1,25/δ))')
def gaussian_without_its_factor(monkeypatch):
    replace(monkeypatch, mechanisms, "gaussian_sigma_factor", lambda *, delta: 1.0)


@breaks('«una persona al azar» que siempre es la primera')
def publish_always_the_first(monkeypatch):
    replace(monkeypatch, queries, "publish_random_person",
                        lambda records, *, rng, size=None: np.repeat(np.asarray(records)[:1], size))


@breaks('el gaussiano calibrado con Δ₁ en vez de Δ₂')
def gauss_calibrated_to_l1(monkeypatch):
    original = queries.laplace_vs_gaussian_vector_error

    def with_l1(k, *, epsilon, delta, measure="std"):
        noise = original(k, epsilon=epsilon, delta=delta, measure=measure)
        noise["gauss"] = noise["gauss"] * np.sqrt(noise["k"])   # Δ₂ replaced by Δ₁ = k
        return noise
    replace(monkeypatch, queries, "laplace_vs_gaussian_vector_error", with_l1)


@breaks('la cuenta de Rényi de un solo paso')
def rdp_forgets_composition(monkeypatch):
    original = accounting.gaussian_rdp_epsilon
    replace(monkeypatch, accounting, "gaussian_rdp_epsilon", lambda **kw: original(**{**kw, "steps": 1}))


@breaks('δ sin repartir entre los pasos')
def delta_not_split_over_steps(monkeypatch):
    # σ calibrated with δ for each step instead of δ/T; the ledger sees the σ actually used.
    replace(monkeypatch, learning, "compute_noise_sigma",
                        lambda *, epsilon, delta, iterations, clip_norm: mechanisms.gaussian_sigma(
                            sensitivity=clip_norm, epsilon=epsilon / iterations, delta=delta))


@breaks('gradientes sin recortar')
def no_gradient_clipping(monkeypatch):
    replace(monkeypatch, learning, "clip_gradients", lambda gradients, *, clip_norm: np.asarray(gradients))


def scale_gradient_noise_by(factor):
    def sabotage(monkeypatch):
        original = learning.compute_noise_sigma
        replace(monkeypatch, learning, "compute_noise_sigma", lambda **kw: factor * original(**kw))
    sabotage.__name__ = f"gradient_noise_times_{factor:g}".replace(".", "_")
    sabotage.what = f"el σ de los gradientes multiplicado por {format_number(factor)}"
    return sabotage


@breaks('el ruido de cada paso ignora cuántos pasos hay')
def noise_ignores_the_number_of_steps(monkeypatch):
    # Each step calibrated as if it were the only one: more steps look free.
    replace(monkeypatch, learning, "compute_noise_sigma",
                        lambda *, epsilon, delta, iterations, clip_norm: mechanisms.gaussian_sigma(
                            sensitivity=clip_norm, epsilon=min(epsilon, 0.99), delta=delta))


# --------------------------------------------------------------- chapter 6 --


@breaks('FedAvg sin los pesos n_k/n')
def unweighted_average(monkeypatch):
    # A 7-patient hospital gets the voice of a 1274-patient one.
    def average(updates, sizes, run_starts):
        counts = np.diff(np.append(run_starts, len(sizes)))
        return np.add.reduceat(updates, run_starts, axis=0) / counts[:, None]
    replace(monkeypatch, averaging, "_average_by_run", average)


@breaks('«un hospital por nivel» que es un reparto al azar')
def hospitals_at_random(monkeypatch):
    # «One hospital per education level» that is in fact a random (IID) split.
    def random_split(groups):
        return fed.split_iid(len(groups), clients=16, rng=np.random.default_rng(0))
    replace(monkeypatch, fed, "split_by_group", random_split)   # everywhere the chapter splits by group


@breaks('selección de clientes no aleatoria: siempre los primeros')
def first_clients_every_round(monkeypatch):
    # «At random» that is always the first m clients.
    replace(monkeypatch, averaging, "select_clients", lambda clients, *, fraction, rng: np.arange(
        averaging._count_participants(clients, fraction)))


@breaks('selección sesgada hacia algunos clientes')
def selection_biased_to_the_last(monkeypatch):
    # Each client drawn with weight (index + 1)²: in a split by education, the best educated
    # hospitals almost always take part.
    def biased(clients, *, fraction, rng):
        weights = np.arange(1, clients + 1, dtype=float) ** 2
        chosen = averaging._count_participants(clients, fraction)
        return np.sort(rng.choice(clients, size=chosen, replace=False, p=weights / weights.sum()))
    replace(monkeypatch, averaging, "select_clients", biased)


@breaks('selección por turnos fijos')
def selection_in_turns(monkeypatch):
    # A fixed rotation: each client takes part equally often, and nothing is left to chance.
    turn = {"round": 0}

    def rotation(clients, *, fraction, rng):
        chosen = averaging._count_participants(clients, fraction)
        start = (turn["round"] * chosen) % clients
        turn["round"] += 1
        return np.sort((start + np.arange(chosen)) % clients)
    replace(monkeypatch, averaging, "select_clients", rotation)


@breaks('las épocas locales ignoradas (siempre E = 1)')
def local_epochs_ignored(monkeypatch):
    original = averaging._local_descent
    replace(monkeypatch, averaging, "_local_descent", lambda thetas, X, y, sizes, *, local_epochs, learning_rate,
            **rest: original(thetas, X, y, sizes, local_epochs=1, learning_rate=learning_rate, **rest))


@breaks('la reconstrucción divide por la norma, no por Δ₀')
def reconstruction_by_norm(monkeypatch):
    replace(monkeypatch, leakage, "reconstruct_features", lambda update: update / np.linalg.norm(update, axis=-1,
                                                                                             keepdims=True))


@breaks('el dispositivo envía el gradiente de su primera persona')
def device_sends_its_first_person(monkeypatch):
    # Each device's update is its first row's gradient (times the batch size): the batch hides nobody.
    replace(monkeypatch, averaging, "_sum_by_client", lambda rows, sizes, starts: rows[..., starts, :] * sizes[:, None])


@breaks('la actualización recortada sin su ruido')
def no_noise_on_one_update(monkeypatch):
    # privatize_update clips but forgets its noise.
    mutate(monkeypatch, leakage, "privatize_update",
           ("noisy = mechanisms.add_gaussian_noise(clipped, sigma=noise_multiplier * clip_norm, rng=rng)",
            "noisy = clipped"))


@breaks('el ruido de la fuga calibrado a sensibilidad 1 en vez de S')
def update_noise_for_sensitivity_one(monkeypatch):
    # σ = z instead of zS: noise calibrated as if one update moved the sum by 1, not by S = 4.
    mutate(monkeypatch, leakage, "privatize_update",
           ("sigma=noise_multiplier * clip_norm",
            "sigma=noise_multiplier"))


@breaks('máscaras que los dos del par suman')
def masks_that_add(monkeypatch):
    # Each client adds the mask of each of its pairs: nobody subtracts, nothing cancels.
    mutate(monkeypatch, secure_aggregation, "_pair_masks",
           ("total = total + mask if client < other else total - mask",
            "total = total + mask"))


@breaks('máscaras de una sola parte (cada cliente la suya, sin par que la reste)')
def one_party_masks(monkeypatch):
    # Each client masks with a mask of its own (its first pair's), not one per pair shared with the other.
    mutate(monkeypatch, secure_aggregation, "_pair_masks",
           ("total = total + mask if client < other else total - mask",
            "total = mask + 0 * total"))


@breaks('máscaras en cero')
def masks_of_zeros(monkeypatch):
    replace(monkeypatch, secure_aggregation, "expand_mask", lambda seed, *, size: np.zeros(size, dtype=np.int64))


@breaks('una «máscara» constante y pública: el servidor la resta y lee cada actualización')
def public_constant_mask(monkeypatch):
    # A «mask» that is a constant of the code: the server subtracts it and reads every update.
    replace(monkeypatch, secure_aggregation, "expand_mask",
                        lambda seed, *, size: np.full(size, 2**29, dtype=np.int64))


@breaks('máscaras de una semilla pública (la PRG ignora la semilla del par)')
def masks_from_a_public_seed(monkeypatch):
    # The PRG ignores the pair's seed and starts from a public one: anyone can regenerate the masks.
    mutate(monkeypatch, secure_aggregation, "expand_mask",
           ("np.random.PCG64(int(seed))",
            "np.random.PCG64(0)"))


@breaks('semillas de los pares de un generador público')
def pair_seeds_from_a_public_generator(monkeypatch):
    # The pairs' seeds drawn from a generator everybody can rebuild (seed 0), not from the round's.
    mutate(monkeypatch, secure_aggregation, "setup_secure_aggregation",
           ("values = rng.integers(0, SHARE_PRIME, size=len(pairs)).tolist()",
            "values = np.random.default_rng(0).integers(0, SHARE_PRIME, size=len(pairs)).tolist()"))


@breaks('máscaras pequeñas, que el servidor casi puede quitar')
def masks_too_small(monkeypatch):
    # Masks below 2⁸ on updates coded with 2¹⁶ per unit: the server sees each update to the third decimal.
    original = secure_aggregation.expand_mask
    replace(monkeypatch, secure_aggregation, "expand_mask", lambda seed, *, size: original(seed, size=size) % 2**8)


@breaks('el secreto «reconstruido» de una sola parte')
def secret_from_one_share(monkeypatch):
    replace(monkeypatch, secure_aggregation, "reconstruct_secret", lambda parts: int(parts[0][1]))


@breaks('el servidor divide por el K exacto en vez del privado')
def exact_number_of_clients(monkeypatch):
    # The server divides by the true K instead of the private count K̂ (the count is still drawn).
    original = fed.calibrate_rounds

    def calibrate(clients, dimension, **kw):
        estimated, sigma, step = original(clients, dimension, **kw)
        return np.full_like(np.asarray(estimated, dtype=float), float(clients)), sigma, step
    replace(monkeypatch, private_training, "calibrate_rounds", calibrate)


@breaks('sin ruido para clínicas y hospitales (el libro anota el σ completo)')
def no_noise_for_clinics_and_hospitals(monkeypatch):
    # Clients with several rows (clinics, hospitals) publish their sum bare; the ledger still records σ.
    mutate(monkeypatch, private_training, "_train_privately",
           ("noisy_sums.append(noisy if add_noise else total)",
            "noisy_sums.append(noisy if add_noise and one_row_each else total)"))


@breaks('la décima parte del ruido para clínicas y hospitales')
def tenth_of_the_noise_for_clinics_and_hospitals(monkeypatch):
    mutate(monkeypatch, private_training, "_train_privately",
           ("noisy = mechanisms.add_gaussian_noise(total, sigma=float(sigma), rng=rng)",
            "noisy = mechanisms.add_gaussian_noise(total, sigma=float(sigma) * (1 if one_row_each else 0.1), rng=rng)"))


@breaks('sin recorte para clínicas y hospitales')
def no_clipping_for_clinics_and_hospitals(monkeypatch):
    replace(monkeypatch, private_training, "_clip_rows", lambda updates, clip_norm: updates)


@breaks('DP-FedAvg calibrado y anotado con sensibilidad 1 en vez de S')
def rounds_calibrated_to_sensitivity_one(monkeypatch):
    # σ and the ledger as if an update moved the sum by 1; the updates are still clipped to S = 4.
    mutate(monkeypatch, private_training, "calibrate_rounds", ("clip_norm=clip_norm, rng=rng,", "clip_norm=1.0, rng=rng,"),
           ("sensitivity=float(clip_norm)", "sensitivity=1.0"))


@breaks('la regla del paso olvidada: el servidor siempre da el paso entero')
def server_step_always_one(monkeypatch):
    # The step rule forgotten: the server always moves θ by the whole noisy average.
    replace(monkeypatch, learning, "compute_step_size", lambda *, sigma, n, learning_rate=learning.DEFAULT_LEARNING_RATE,
                        **kw: learning_rate if np.ndim(n) == 0 else np.full(np.shape(n), float(learning_rate)))


@breaks('modelos «privados» sin privacidad')
def private_models_without_privacy(monkeypatch):
    replace(monkeypatch, learning, "noisy_gradient_descent", lambda X, y, **kw: learning.train_logistic(X, y))


@breaks('un modelo «privado» que nunca entrena')
def private_models_never_train(monkeypatch):
    # The «private» model is the starting point: it predicts the majority class for everybody.
    replace(monkeypatch, learning, "noisy_gradient_descent",
                        lambda X, y, **kw: learning.make_initial_theta(np.shape(X)[1]))


# ------------------------------------------------------ everywhere at once --


@breaks('ningún ruido, en ningún mecanismo')
def no_noise_at_all(monkeypatch):
    # Every mechanism publishes its input: Laplace and Gauss, in every chapter.
    replace(monkeypatch, mechanisms, "_add_noise", lambda value, draw: value)


@breaks('un cuarto del ruido en cada mecanismo (el libro anota la escala calibrada)')
def quarter_of_the_noise(monkeypatch):
    # Every draw a quarter of what it should be; the ledgers still record the calibrated scales.
    original = mechanisms._add_noise
    replace(monkeypatch, mechanisms, "_add_noise", lambda value, draw: original(value, lambda size: draw(size) / 4))


@breaks('ningún recorte, en ningún lado')
def no_clipping_anywhere(monkeypatch):
    replace(monkeypatch, queries, "clip", lambda values, *, bound: np.asarray(values, dtype=float))
    replace(monkeypatch, learning, "clip_gradients", lambda gradients, *, clip_norm: np.asarray(gradients))
    replace(monkeypatch, private_training, "_clip_rows", lambda updates, clip_norm: updates)
    mutate(monkeypatch, learning, "_descend_noisily",
           ("scale = np.minimum(1.0, clip_norm / np.maximum(np.abs(residual) * row_norms, 1e-300))",
            "scale = 1.0"))
    mutate(monkeypatch, private_training, "_train_privately",
           ("weights = weights * np.minimum(1.0, clip_norm / np.maximum(np.abs(weights) * row_norms, 1e-300))",
            "weights = weights"))


ALL_STEPS = tuple(name for name, _ in lab.STEPS)
FEDERATED = ("federated",)

NAMED_SABOTAGES = [
    # (the sabotage, the steps where it bites, the facts it makes false at every seed of SEEDS)
    (public_constant_mask, FEDERATED, [("federated", 9)]),
    (masks_from_a_public_seed, FEDERATED, [("federated", 9)]),
    (pair_seeds_from_a_public_generator, FEDERATED, [("federated", 9)]),
    (masks_too_small, FEDERATED, [("federated", 9), ("federated", 10)]),
    (one_party_masks, FEDERATED, [("federated", 8)]),
    (no_noise_for_clinics_and_hospitals, FEDERATED, [("federated", 13), ("federated", 16)]),
    (tenth_of_the_noise_for_clinics_and_hospitals, FEDERATED, [("federated", 13), ("federated", 16)]),
    (no_clipping_for_clinics_and_hospitals, FEDERATED, [("federated", 14)]),
    (update_noise_for_sensitivity_one, FEDERATED, [("federated", 7)]),
    (first_clients_every_round, FEDERATED, [("federated", 2)]),
    (selection_biased_to_the_last, FEDERATED, [("federated", 2)]),
    (selection_in_turns, FEDERATED, [("federated", 2)]),
    (rounds_calibrated_to_sensitivity_one, FEDERATED, [("federated", 12), ("federated", 14), ("federated", 16)]),
    (no_noise_at_all, ALL_STEPS, [("differencing_attack", 1), ("hospital", 0), ("hospital", 1), ("averaging", 0),
                                  ("histogram", 0), ("clipping", 0), ("clipping", 1), ("mean", 0), ("gaussian", 0),
                                  ("vector", 0), ("federated", 6), ("federated", 7), ("federated", 13),
                                  ("federated", 16)]),
    (quarter_of_the_noise, ALL_STEPS, [("differencing_attack", 1), ("hospital", 0), ("hospital", 1),
                                       ("histogram", 0), ("clipping", 0), ("clipping", 1), ("mean", 0),
                                       ("gaussian", 0), ("vector", 0), ("federated", 7), ("federated", 13)]),
    (no_clipping_anywhere, ALL_STEPS, [("clipping", 0), ("clipping", 1), ("learning", 1), ("federated", 14)]),
    (private_models_never_train, ("learning", "federated"), [("learning", 0), ("federated", 12),
                                                              ("federated", 17)]),
]
"""The ways to break privacy the evidence as a whole must catch, and the facts that catch each."""


FACT_SABOTAGES = {
    ("differencing_attack", 0): [count_everyone],
    ("differencing_attack", 1): [scale_laplace_by(2.0)],
    ("hospital", 0): [scale_laplace_by(2.0), scale_laplace_by(0.25)],
    ("hospital", 1): [scale_laplace_by(0.5)],
    ("hospital", 2): [ledger_forgets_repetitions],
    ("averaging", 0): [repeat_the_same_noise],
    ("histogram", 0): [scale_laplace_by(2.0)],
    ("histogram", 1): [cumulative_histogram],
    ("clipping", 0): [no_value_clipping],
    ("clipping", 1): [scale_laplace_by(2.0)],
    ("private_bound", 0): [search_forgets_its_spend],
    ("private_bound", 1): [search_without_the_noise_filter],
    ("mean", 0): [mean_spends_epsilon_twice],
    ("local_sensitivity", 0): [global_scale_for_the_sum],
    ("gaussian", 0): [gaussian_without_its_factor],
    ("delta_rule", 0): [publish_always_the_first],
    ("vector", 0): [gauss_calibrated_to_l1],
    ("composition", 0): [rdp_forgets_composition],
    ("learning", 0): [delta_not_split_over_steps],
    ("learning", 1): [no_gradient_clipping],
    ("learning", 2): [scale_gradient_noise_by(20.0)],
    ("learning", 3): [scale_gradient_noise_by(0.1)],
    ("learning", 4): [noise_ignores_the_number_of_steps],
    # chapter 6, in the order of its evidence
    ("federated", 0): [unweighted_average],
    ("federated", 1): [hospitals_at_random],
    ("federated", 2): [first_clients_every_round, selection_biased_to_the_last, selection_in_turns],
    ("federated", 3): [local_epochs_ignored],
    ("federated", 4): [reconstruction_by_norm],
    ("federated", 5): [device_sends_its_first_person],
    ("federated", 6): [no_noise_on_one_update],
    ("federated", 7): [update_noise_for_sensitivity_one, no_noise_on_one_update],
    ("federated", 8): [masks_that_add, one_party_masks],
    ("federated", 9): [public_constant_mask, masks_from_a_public_seed, pair_seeds_from_a_public_generator,
                       masks_too_small, masks_of_zeros],
    ("federated", 10): [secret_from_one_share],
    ("federated", 11): [delta_not_split_over_steps],
    ("federated", 12): [exact_number_of_clients],
    ("federated", 13): [no_noise_for_clinics_and_hospitals, tenth_of_the_noise_for_clinics_and_hospitals],
    ("federated", 14): [no_clipping_for_clinics_and_hospitals, rounds_calibrated_to_sensitivity_one],
    ("federated", 15): [scale_gradient_noise_by(20.0)],
    ("federated", 16): [server_step_always_one, no_noise_for_clinics_and_hospitals],
    ("federated", 17): [private_models_without_privacy, private_models_never_train],
}


def false_facts(sabotage, steps, seed: int, parts=None) -> list[tuple[str, int]]:
    """The (step, index) of every fact of ``steps`` that is false at ``seed`` with ``sabotage`` in place.

    ``parts``: of the federated step, only those parts (``evidence_of``).
    """
    with pytest.MonkeyPatch.context() as monkeypatch:
        sabotage(monkeypatch)
        forget_tables()
        try:
            return [(step, index) for step, index, item in evidence_of(steps, seed, parts) if item["holds"] is not True]
        finally:
            forget_tables()


def forget_tables() -> None:
    """Empty dpdeck.learning's caches of tables (the distinct rows, the last grouping).

    They keep what the library's own code computed from some rows; emptied before and after each
    sabotage, a broken version of that code starts from nothing, and nothing it computed outlives it.
    """
    learning._distinct_tables.clear()
    learning._last_grouping = None


def parts_for(facts) -> list[str]:
    """The parts of the federated step that give some of ``facts`` ((step, index) pairs), in their order."""
    found = {federated_part(index) for step, index in facts if step == lab_federated.STEP}
    return [part for part, _ in FEDERATED_FACTS if part in found]


def catches() -> dict:
    """Fact (step, index) → the sabotages that make it false at every seed of ``SEEDS``, as declared here."""
    found: dict = {}
    for fact, broken_ones in FACT_SABOTAGES.items():
        found.setdefault(fact, []).extend(broken_ones)
    for broken, _, facts in NAMED_SABOTAGES:
        for fact in facts:
            if broken not in found.setdefault(fact, []):
                found[fact].append(broken)
    return found


def evidence_table(result: dict) -> str:
    """The table of py/dpdeck/lab/README.md: every fact of ``result`` and the sabotages that make it false."""
    positions: dict = {}
    found = catches()
    lines = ["| Hecho | Lo vuelven falso (en las semillas " + ", ".join(map(str, SEEDS)) + ") |", "|---|---|"]
    for item in result["evidence"]:
        index = positions.setdefault(item["result"], 0)
        positions[item["result"]] += 1
        fact = item["fact"].split(": ")[0].split(". ")[0].rstrip(".")
        fact = fact if len(fact) <= 110 else fact[:107].rstrip() + "…"
        broken = "; ".join(f"{b.what} (`{b.__name__}`)" for b in found.get((item["result"], index), []))
        fact = fact.replace("|", "\\|")   # a bar inside a cell would end it
        lines.append(f"| `{item['result']}` {index}: {fact} | {broken} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    """Without arguments: the table; with sabotage names: which facts they make false, seed by seed."""
    import warnings
    warnings.simplefilter("ignore")
    if len(sys.argv) == 1:
        print(evidence_table(lab.run_lab(0)), end="")
        return
    for broken, steps, _ in NAMED_SABOTAGES:
        if broken.__name__ not in sys.argv[1:]:
            continue
        caught = [false_facts(broken, steps, seed) for seed in SEEDS]
        always = sorted(set.intersection(*(set(found) for found in caught)))
        print(f"{broken.__name__}: {broken.what}\n    at every seed: {always}")
        for seed, found in zip(SEEDS, caught):
            print(f"    seed {seed}: {found}")


if __name__ == "__main__":
    main()
