"""Fugas por gradientes: la actualización de una sola persona devuelve sus datos.

Zhu, Liu y Han (2019), "Deep Leakage from Gradients", NeurIPS: en la regresión
logística el gradiente de una persona es (σ(x·θ) − y)·x, un múltiplo de sus
datos; dividirlo por su componente del intercepto devuelve x exacto (Phong et
al. 2018 lo observaron para este modelo). ``measure_leakage`` mide cuánto queda
de la fuga con lotes más grandes y con ruido (``privatize_update``).
"""

from __future__ import annotations

import numpy as np

from .. import learning, mechanisms
from .._checks import check_finite, check_positive, check_positive_int, check_rng, describe
from .averaging import _client_updates, train_clients
from .clients import AGE_COLUMN, DEFAULT_UPDATE_CLIP, EDUCATION_COLUMN, _check_noise_multiplier, _check_theta


# ---------------------------------------------------- fugas por gradientes --


def compute_device_update(theta, X, y, *, local_epochs=1, learning_rate=learning.DEFAULT_LEARNING_RATE):
    """La actualización Δ que envía un dispositivo con las filas ``X``, ``y`` (un cliente).

    Fórmula: E pasos locales desde θ (``train_clients`` con un solo cliente);
    con una persona, Δ = −η Σ_e (σ(x·θ_e) − y) x: un múltiplo de x.
    """
    X = check_finite(X, name="X")
    X = X[None, :] if X.ndim == 1 else X
    y = np.atleast_1d(check_finite(y, name="y"))
    updates, _ = train_clients(theta, X, y, np.zeros(X.shape[0], dtype=np.intp), selected=[0],
                               local_epochs=local_epochs, learning_rate=learning_rate)
    return updates[0]


def reconstruct_features(update) -> np.ndarray:
    """Reconstruye las variables x de quien envió ``update``: x̂ = Δ / Δ₀.

    Fórmula: con una sola persona, Δ = c·x con c = −η Σ_e (σ(x·θ_e) − y) ≠ 0, y
    x₀ = 1 (el intercepto), así que Δ/Δ₀ = x exacto: ∇w/∇b revela los datos.
    Con un lote de varias personas devuelve Σ cᵢxᵢ / Σ cᵢ, un promedio
    ponderado de todos (pesos que pueden ser negativos), no los datos de nadie.
    ``update`` puede ser una actualización (d) o varias (una por fila).
    Referencia: Zhu, Liu y Han (2019); Phong et al. (2018), sección 3.
    """
    update = check_finite(update, name="update")
    if np.ndim(update) not in (1, 2) or np.shape(update)[-1] < 2:
        raise ValueError(f"update debe ser un vector con el intercepto primero; se recibió {describe(update)}")
    intercept = update[..., :1]
    if np.any(intercept == 0):
        raise ValueError("la componente del intercepto de update es 0: no hay nada que dividir")
    return update / intercept


def decode_features(features) -> dict:
    """Edad y nivel educativo a partir de x = (1, (edad − 40)/15, (educación − 10)/3).

    Invierte ``learning.make_features`` con sus constantes públicas. Con una
    fila devuelve números; con varias, arreglos.
    """
    features = check_finite(features, name="features")
    age = learning.AGE_CENTER + learning.AGE_SCALE * features[..., AGE_COLUMN]
    education = learning.EDUCATION_CENTER + learning.EDUCATION_SCALE * features[..., EDUCATION_COLUMN]
    if np.ndim(features) == 1:
        return {"age": float(age), "education_num": float(education)}
    return {"age": age, "education_num": education}


def infer_high_income(update) -> bool:
    """La etiqueta de una sola persona: ingreso alto si Δ₀ > 0.

    Δ₀ = −η Σ_e (σ(x·θ_e) − y): con y = 1 cada término σ − 1 es negativo y Δ₀ > 0;
    con y = 0, Δ₀ < 0. El signo del gradiente del intercepto delata la etiqueta.
    """
    update = check_finite(update, name="update")
    return bool(update[0] > 0)


def privatize_update(update, *, clip_norm, noise_multiplier, rng):
    """Recorta ``update`` (o cada fila) a norma L2 ≤ S y suma ruido N(0, (zS)²).

    Fórmula: Δ ↦ Δ · min(1, S/‖Δ‖₂) + Z, Z ~ N(0, z²S² I).

    Garantía: sobre una sola actualización (la de una persona o un cliente),
    el mecanismo gaussiano con sensibilidad L2 = S y σ = zS: (α, α/(2z²))-RDP
    (Mironov 2017). Es lo que publica el servidor en una ronda de
    ``train_federated_privately`` con un solo participante.
    """
    update = check_finite(update, name="update")
    clip_norm = check_positive(clip_norm, name="clip_norm")
    noise_multiplier = _check_noise_multiplier(noise_multiplier)
    rows = np.atleast_2d(update)
    clipped = learning.clip_gradients(rows, clip_norm=clip_norm)
    noisy = mechanisms.add_gaussian_noise(clipped, sigma=noise_multiplier * clip_norm, rng=rng)
    return noisy.reshape(np.shape(update))


def measure_leakage(census, *, person, batch_sizes, noise_multiplier, trials, rng,
                    clip_norm=DEFAULT_UPDATE_CLIP, local_epochs=1, theta=None) -> dict:
    """Reconstruye a ``person`` desde la actualización de su dispositivo, sola, en lote y con ruido.

    1. Sola: Δ de su dispositivo (solo sus datos) → x̂ = Δ/Δ₀: edad, educación e
       ingreso alto exactos.
    2. En lote: su fila junto a B − 1 personas al azar del censo (``trials``
       lotes por B, todos a la vez): el error absoluto mediano de la edad
       reconstruida.
    3. Recortada y con ruido (``privatize_update``, ``trials`` veces): el error
       mediano de la edad.

    Todo parte del modelo global ``theta`` que el servidor envía (por defecto,
    la regresión logística sin privacidad entrenada sobre el censo: un modelo
    avanzado del entrenamiento).
    Devuelve ``true`` (edad, educación, ingreso), ``alone`` (lo reconstruido),
    ``alone_error`` (máximo error absoluto de edad y educación), ``update`` (la
    actualización sola), ``batch_sizes``, ``batch_error`` (mediana del error de
    edad por B), ``noisy_updates`` (las ``trials`` actualizaciones recortadas y
    con ruido, una por fila) y ``noisy_error``.
    """
    rng = check_rng(rng)
    trials = check_positive_int(trials, name="trials")
    local_epochs = check_positive_int(local_epochs, name="local_epochs")
    batch_sizes = [check_positive_int(b, name="batch_sizes") for b in batch_sizes]
    X, y = learning.make_dataset(census)
    index = int(np.flatnonzero(census.name == person)[0]) if isinstance(person, str) else int(person)
    theta = learning.train_logistic(X, y) if theta is None else _check_theta(theta, X.shape[1])
    true = {"age": float(census.age[index]), "education_num": float(census.education_num[index]),
            "high_income": bool(census.high_income[index])}

    update = compute_device_update(theta, X[index], y[index], local_epochs=local_epochs)
    alone = decode_features(reconstruct_features(update))
    alone["high_income"] = infer_high_income(update)
    alone_error = max(abs(alone["age"] - true["age"]), abs(alone["education_num"] - true["education_num"]))

    others = np.delete(np.arange(len(y)), index)
    batch_error = []
    for size in batch_sizes:
        lots = trials if size > 1 else 1
        rows = np.empty((lots, size), dtype=np.intp)
        rows[:, 0] = index
        for lot in range(lots):
            rows[lot, 1:] = rng.choice(others, size=size - 1, replace=False)
        # Cada lote es un dispositivo: sus filas juntas, un cliente por lote.
        updates = _client_updates(theta, X[rows.ravel()], y[rows.ravel()], np.full(lots, float(size)),
                                  local_epochs=local_epochs, learning_rate=learning.DEFAULT_LEARNING_RATE)
        ages = decode_features(reconstruct_features(updates))["age"]
        batch_error.append(float(np.median(np.abs(ages - true["age"]))))

    noisy = privatize_update(np.tile(update, (trials, 1)), clip_norm=clip_norm,
                             noise_multiplier=noise_multiplier, rng=rng)
    noisy_ages = decode_features(reconstruct_features(noisy))["age"]
    return {
        "person": index,
        "true": true,
        "alone": alone,
        "alone_error": alone_error,
        "update": update,
        "batch_sizes": list(batch_sizes),
        "batch_error": np.array(batch_error),
        "noise_multiplier": float(noise_multiplier),
        "clip_norm": float(clip_norm),
        "noisy_updates": noisy,
        "noisy_error": float(np.median(np.abs(noisy_ages - true["age"]))),
    }
