"""A bank of answers for every exercise check: right ones written in many ways, wrong ones that look right.

``BANK[check]`` holds ``right``, a list of (name, cell source) that must pass,
and ``wrong``, a list of (name, cell source, words) that must fail with a
verdict whose ✗ findings contain ``words``: the explanation names the actual
mistake. Each source is what a student could type in the exercise's cell.
"""

from __future__ import annotations

import textwrap

PREAMBLE = "import math\nimport numpy as np\n"


def cell(source: str) -> str:
    return PREAMBLE + textwrap.dedent(source)


def laplace(body: str, *, signature: str = "valor, *, sensibilidad, epsilon, rng") -> str:
    return cell(f"def mecanismo_laplace({signature}):\n" + textwrap.indent(textwrap.dedent(body), "    "))


LAPLACE_RIGHT = [
    ("la solución", laplace("b = sensibilidad / epsilon\nreturn valor + rng.laplace(0.0, b)")),
    ("con palabras clave", laplace("return valor + rng.laplace(loc=0.0, scale=sensibilidad / epsilon)")),
    ("con el mecanismo de la biblioteca", laplace(
        "from dpdeck.mechanisms import laplace_mechanism\n"
        "return laplace_mechanism(valor, sensitivity=sensibilidad, epsilon=epsilon, rng=rng)")),
    ("con la inversa de la distribución", laplace(
        "b = sensibilidad / epsilon\n"
        "u = rng.uniform(-0.5, 0.5)\n"
        "return valor - b * np.sign(u) * np.log(1 - 2 * abs(u))")),
    ("con la resta de dos exponenciales", laplace(
        "b = sensibilidad / epsilon\nreturn valor + rng.exponential(b) - rng.exponential(b)")),
    ("redondeada (posprocesamiento)", laplace("return round(valor + rng.laplace(0.0, sensibilidad / epsilon))")),
    ("redondeada con numpy y sin negativos", laplace(
        "return max(0.0, float(np.round(valor + rng.laplace(0.0, sensibilidad / epsilon))))")),
    ("con argumentos posicionales", laplace("return valor + rng.laplace(0.0, sensibilidad / epsilon)",
                                            signature="valor, sensibilidad, epsilon, rng")),
]

LAPLACE_WRONG = [
    ("la de partida (b = 1)", laplace("b = 1.0\nreturn valor + rng.laplace(0.0, b)"), "debería ser 5"),
    ("ε/Δ al revés", laplace("return valor + rng.laplace(0.0, epsilon / sensibilidad)"), "Parece ε/Δf"),
    ("sin la sensibilidad", laplace("return valor + rng.laplace(0.0, 1 / epsilon)"), "Parece 1/ε"),
    ("Δ·ε", laplace("return valor + rng.laplace(0.0, sensibilidad * epsilon)"), "Parece Δf·ε"),
    ("gaussiano de desviación b", laplace("return valor + rng.normal(0.0, sensibilidad / epsilon)"),
     "Parece ruido gaussiano"),
    ("gaussiano con la misma escala media", laplace(
        "return valor + rng.normal(0.0, sensibilidad / epsilon * math.sqrt(math.pi / 2))"), "rng.normal"),
    ("recortado a ±3b", laplace(
        "b = sensibilidad / epsilon\nreturn valor + np.clip(rng.laplace(0.0, b), -3 * b, 3 * b)"),
     "Recortas o truncas el ruido"),
    ("truncado a ±5b, volviendo a sortear", laplace(
        "b = sensibilidad / epsilon\n"
        "while True:\n"
        "    ruido = rng.laplace(0.0, b)\n"
        "    if abs(ruido) <= 5 * b:\n"
        "        return valor + ruido"), "Recortas o truncas el ruido"),
    ("uniforme con la misma escala media", laplace(
        "b = sensibilidad / epsilon\nreturn valor + rng.uniform(-2 * b, 2 * b)"), "Recortas o truncas"),
    ("el doble del ruido necesario", laplace("return valor + rng.laplace(0.0, 2 * sensibilidad / epsilon)"),
     "la escala mínima"),
    ("semilla fija adentro", laplace(
        "propio = np.random.default_rng(0)\nreturn valor + propio.laplace(0.0, sensibilidad / epsilon)"),
     "semilla fija"),
    ("un generador propio fuera de la función", cell(
        "propio = np.random.default_rng(7)\n"
        "def mecanismo_laplace(valor, *, sensibilidad, epsilon, rng):\n"
        "    return valor + propio.laplace(0.0, sensibilidad / epsilon)\n"), "no saca su azar del `rng`"),
    ("np.random global", laplace("return valor + np.random.laplace(0.0, sensibilidad / epsilon)"),
     "no saca su azar del `rng`"),
    ("sin ruido", laplace("return valor"), "falta el ruido"),
    ("solo el ruido", laplace("return rng.laplace(0.0, sensibilidad / epsilon)"), "¿Devuelves solo el ruido?"),
    ("el ruido centrado en el valor", laplace("return valor + rng.laplace(valor, sensibilidad / epsilon)"),
     "centrado en 0"),
    ("redondeado a decenas", laplace("return valor + round(rng.laplace(0.0, sensibilidad / epsilon), -1)"),
     "debería ser"),
    ("devuelve texto", laplace("return f'{valor + rng.laplace(0.0, sensibilidad / epsilon):.1f}'"),
     "se espera un número"),
]


def budget(body: str) -> str:
    return cell("def publicar(conteos, *, epsilon_total, rng):\n" + textwrap.indent(textwrap.dedent(body), "    "))


BUDGET_RIGHT = [
    ("la solución", budget("por_consulta = epsilon_total / len(conteos)\n"
                           "return conteos + rng.laplace(0.0, 1 / por_consulta, size=len(conteos))")),
    ("un conteo a la vez", budget(
        "eps = epsilon_total / len(conteos)\nreturn np.array([c + rng.laplace(0.0, 1 / eps) for c in conteos])")),
    ("con el mecanismo de la biblioteca", budget(
        "from dpdeck.mechanisms import laplace_mechanism\n"
        "return laplace_mechanism(np.asarray(conteos, dtype=float), sensitivity=len(conteos),\n"
        "                         epsilon=epsilon_total, rng=rng)")),
    ("con la inversa de la distribución", budget(
        "b = len(conteos) / epsilon_total\n"
        "u = rng.uniform(-0.5, 0.5, size=len(conteos))\n"
        "return conteos - b * np.sign(u) * np.log(1 - 2 * np.abs(u))")),
    ("redondeada y sin negativos (posprocesamiento)", budget(
        "b = len(conteos) / epsilon_total\n"
        "return np.maximum(0, np.round(conteos + rng.laplace(0.0, b, size=len(conteos))))")),
    ("gastando menos: ε/(k + 1) a cada uno", budget(
        "eps = epsilon_total / (len(conteos) + 1)\n"
        "return conteos + rng.laplace(0.0, 1 / eps, size=len(conteos))")),
    ("una lista de Python", budget(
        "k = len(conteos)\nreturn [float(c) + rng.laplace(scale=k / epsilon_total) for c in conteos]")),
]

BUDGET_WRONG = [
    ("la de partida: ε entero a cada uno", budget(
        "return conteos + rng.laplace(0.0, 1 / epsilon_total, size=len(conteos))"), "presupuesto entero"),
    ("divide la escala en vez de ε", budget(
        "return conteos + rng.laplace(0.0, 1 / (epsilon_total * len(conteos)), size=len(conteos))"),
     "divides la escala"),
    ("k − 1 partes", budget(
        "eps = epsilon_total / (len(conteos) - 1)\n"
        "return conteos + rng.laplace(0.0, 1 / eps, size=len(conteos))"), "son 4 conteos"),
    ("ε/k al revés (escala ε/k)", budget(
        "return conteos + rng.laplace(0.0, epsilon_total / len(conteos), size=len(conteos))"),
     "más que el presupuesto"),
    ("un reparto desigual", budget(
        "k = len(conteos)\n"
        "partes = np.array([0.5] + [0.5 / (k - 1)] * (k - 1)) * epsilon_total\n"
        "return conteos + rng.laplace(0.0, 1 / partes)"), "partes iguales"),
    ("un solo ruido para todos", budget(
        "return conteos + rng.laplace(0.0, len(conteos) / epsilon_total)"), "comparten el ruido"),
    ("ruido recortado a ±3b", budget(
        "b = len(conteos) / epsilon_total\n"
        "return conteos + np.clip(rng.laplace(0.0, b, size=len(conteos)), -3 * b, 3 * b)"),
     "Recortas o truncas el ruido"),
    ("gaussiano con la misma escala media", budget(
        "b = len(conteos) / epsilon_total\n"
        "return conteos + rng.normal(0.0, b * math.sqrt(math.pi / 2), size=len(conteos))"), "rng.normal"),
    ("semilla fija adentro", budget(
        "propio = np.random.default_rng(1)\n"
        "return conteos + propio.laplace(0.0, len(conteos) / epsilon_total, size=len(conteos))"),
     "semilla fija"),
    ("np.random global", budget(
        "return conteos + np.random.laplace(0.0, len(conteos) / epsilon_total, size=len(conteos))"),
     "no saca su azar del `rng`"),
    ("sin ruido en el último conteo", budget(
        "ruido = rng.laplace(0.0, len(conteos) / epsilon_total, size=len(conteos))\n"
        "ruido[-1] = 0\nreturn conteos + ruido"), "sale sin ruido"),
    ("publica solo el total", budget(
        "return conteos.sum() + rng.laplace(0.0, 1 / epsilon_total)"), "se espera una publicación por consulta"),
]


def clipped_sum(body: str) -> str:
    return cell("def suma_privada(valores, *, cota, epsilon, rng):\n"
                + textwrap.indent(textwrap.dedent(body), "    "))


CLIPPED_SUM_RIGHT = [
    ("la solución", clipped_sum(
        "recortados = np.clip(valores, 0, cota)\nreturn recortados.sum() + rng.laplace(0.0, cota / epsilon)")),
    ("con mínimo y máximo", clipped_sum(
        "return np.minimum(np.maximum(valores, 0), cota).sum() + rng.laplace(scale=cota / epsilon)")),
    ("con la biblioteca", clipped_sum(
        "from dpdeck.queries import private_clipped_sum\n"
        "return private_clipped_sum(valores, bound=cota, epsilon=epsilon, rng=rng)")),
    ("con el mecanismo de Laplace de la biblioteca", clipped_sum(
        "from dpdeck.mechanisms import laplace_mechanism\n"
        "return laplace_mechanism(float(np.clip(valores, 0, cota).sum()), sensitivity=cota, epsilon=epsilon,\n"
        "                         rng=rng)")),
    ("un valor a la vez, con la inversa de la distribución", clipped_sum(
        "total = 0.0\n"
        "for x in valores:\n"
        "    total += min(max(x, 0.0), cota)\n"
        "u = rng.uniform(-0.5, 0.5)\n"
        "return total - cota / epsilon * math.copysign(1.0, u) * math.log(1 - 2 * abs(u))")),
    ("redondeada (posprocesamiento)", clipped_sum(
        "return round(float(np.clip(valores, 0, cota).sum() + rng.laplace(0.0, cota / epsilon)))")),
]

CLIPPED_SUM_WRONG = [
    ("la de partida: sin recortar y con 1/ε", clipped_sum(
        "return valores.sum() + rng.laplace(0.0, 1 / epsilon)"), "no recortas"),
    ("recorta la suma", clipped_sum(
        "return min(valores.sum(), cota) + rng.laplace(0.0, cota / epsilon)"), "recortas la suma"),
    ("recorta a [−cota, cota]", clipped_sum(
        "return np.clip(valores, -cota, cota).sum() + rng.laplace(0.0, cota / epsilon)"), "[−cota, cota]"),
    ("recorta solo por arriba", clipped_sum(
        "return np.minimum(valores, cota).sum() + rng.laplace(0.0, cota / epsilon)"), "solo por arriba"),
    ("recorta |x|", clipped_sum(
        "return np.clip(np.abs(valores), 0, cota).sum() + rng.laplace(0.0, cota / epsilon)"), "recortas |x|"),
    ("recorta hasta cota − 1", clipped_sum(
        "return np.clip(valores, 0, cota - 1).sum() + rng.laplace(0.0, cota / epsilon)"), "cota − 1"),
    ("sensibilidad de un conteo", clipped_sum(
        "return np.clip(valores, 0, cota).sum() + rng.laplace(0.0, 1 / epsilon)"),
     "escala del ruido de un conteo"),
    ("sensibilidad local", clipped_sum(
        "r = np.clip(valores, 0, cota)\nreturn r.sum() + rng.laplace(0.0, r.max() / epsilon)"),
     "sensibilidad local"),
    ("ε/cota", clipped_sum(
        "return np.clip(valores, 0, cota).sum() + rng.laplace(0.0, epsilon / cota)"), "Parece ε/cota"),
    ("2·cota, por las dudas", clipped_sum(
        "return np.clip(valores, 0, cota).sum() + rng.laplace(0.0, 2 * cota / epsilon)"), "2·cota/ε"),
    ("ruido recortado a ±3b", clipped_sum(
        "b = cota / epsilon\n"
        "return np.clip(valores, 0, cota).sum() + np.clip(rng.laplace(0.0, b), -3 * b, 3 * b)"),
     "Recortas o truncas el ruido"),
    ("semilla fija adentro", clipped_sum(
        "propio = np.random.default_rng(3)\n"
        "return np.clip(valores, 0, cota).sum() + propio.laplace(0.0, cota / epsilon)"), "semilla fija"),
]


def sigma(body: str, *, delta_2: str = "4.0") -> str:
    return cell(f"delta_2 = {delta_2}\n\ndef sigma_gaussiano(*, sensibilidad, epsilon, delta):\n"
                + textwrap.indent(textwrap.dedent(body), "    "))


SIGMA_REFUSE = "if epsilon >= 1:\n    raise ValueError('el análisis clásico pide ε < 1')\n"
SIGMA_FORMULA = "return sensibilidad * math.sqrt(2 * math.log(1.25 / delta)) / epsilon"

SIGMA_RIGHT = [
    ("la solución", sigma(SIGMA_REFUSE + SIGMA_FORMULA, delta_2="math.sqrt(16)")),
    ("con la norma de numpy", sigma(SIGMA_REFUSE + SIGMA_FORMULA, delta_2="float(np.linalg.norm(np.ones(16)))")),
    ("con la biblioteca", sigma(
        SIGMA_REFUSE + "from dpdeck.mechanisms import gaussian_sigma\n"
        "return gaussian_sigma(sensitivity=sensibilidad, epsilon=epsilon, delta=delta)", delta_2="16 ** 0.5")),
    ("con el factor de la biblioteca", sigma(
        SIGMA_REFUSE + "from dpdeck.mechanisms import gaussian_sigma_factor\n"
        "return gaussian_sigma_factor(delta=delta) * sensibilidad / epsilon")),
    ("con logaritmos separados y `not ε < 1`", sigma(
        "if not epsilon < 1:\n    raise ValueError(f'ε = {epsilon}: hace falta ε < 1')\n"
        "return sensibilidad / epsilon * np.sqrt(2 * (math.log(1.25) - math.log(delta)))",
        delta_2="np.sqrt(np.sum(np.ones(16) ** 2))")),
    ("con una tolerancia de punto flotante", sigma(
        "if epsilon > 1 - 1e-12:\n    raise ValueError('ε debe ser menor que 1')\n" + SIGMA_FORMULA)),
]

SIGMA_WRONG = [
    ("la de partida: Δ₁", sigma(SIGMA_REFUSE + SIGMA_FORMULA, delta_2="16"), "norma L1"),
    ("Δ con la norma L∞", sigma(SIGMA_REFUSE + SIGMA_FORMULA, delta_2="1"), "norma L∞"),
    ("ln(1/δ)", sigma(SIGMA_REFUSE + "return sensibilidad * math.sqrt(2 * math.log(1 / delta)) / epsilon"),
     "ln(1/δ)"),
    ("sin la raíz", sigma(SIGMA_REFUSE + "return sensibilidad * 2 * math.log(1.25 / delta) / epsilon"),
     "Falta la raíz"),
    ("sin el 2", sigma(SIGMA_REFUSE + "return sensibilidad * math.sqrt(math.log(1.25 / delta)) / epsilon"),
     "Falta el 2"),
    ("la escala de Laplace", sigma(SIGMA_REFUSE + "return sensibilidad / epsilon"), "escala de Laplace"),
    ("por ε en vez de entre ε", sigma(
        SIGMA_REFUSE + "return sensibilidad * math.sqrt(2 * math.log(1.25 / delta)) * epsilon"),
     "no se multiplica"),
    ("ε y Δ cambiados", sigma(
        SIGMA_REFUSE + "return epsilon * math.sqrt(2 * math.log(1.25 / delta)) / sensibilidad"),
     "cambiaste ε y Δ₂"),
    ("devuelve σ²", sigma(
        SIGMA_REFUSE + "return (sensibilidad * math.sqrt(2 * math.log(1.25 / delta)) / epsilon) ** 2"), "σ²"),
    ("se niega solo si ε > 1", sigma(
        "if epsilon > 1:\n    raise ValueError('ε > 1')\n" + SIGMA_FORMULA), "`epsilon > 1`"),
    ("no se niega nunca", sigma(SIGMA_FORMULA), "lanza un ValueError"),
    ("se niega de más (ε ≥ 0,99)", sigma(
        "if epsilon >= 0.99:\n    raise ValueError('ε demasiado grande')\n" + SIGMA_FORMULA), "Niégate solo si ε ≥ 1"),
    ("assert en vez de ValueError", sigma("assert epsilon < 1\n" + SIGMA_FORMULA), "AssertionError"),
    ("otra excepción", sigma("if epsilon >= 1:\n    raise Exception('no')\n" + SIGMA_FORMULA),
     "se espera ValueError"),
]


def clipping(body: str) -> str:
    return cell("def recortar(gradientes, *, C):\n" + textwrap.indent(textwrap.dedent(body), "    "))


CLIP_RIGHT = [
    ("la solución", clipping(
        "normas = np.linalg.norm(gradientes, axis=1, keepdims=True)\n"
        "return gradientes * np.minimum(1.0, C / np.maximum(normas, 1e-12))")),
    ("fila por fila", clipping(
        "salida = []\n"
        "for g in gradientes:\n"
        "    n = math.sqrt(sum(v * v for v in g))\n"
        "    salida.append(g if n <= C else g * (C / n))\n"
        "return np.array(salida)")),
    ("con la biblioteca", clipping(
        "from dpdeck.learning import clip_gradients\nreturn clip_gradients(gradientes, clip_norm=C)")),
    ("con np.where", clipping(
        "n = np.linalg.norm(gradientes, axis=1)[:, None]\n"
        "return np.where(n > C, gradientes * C / np.where(n > 0, n, 1), gradientes)")),
    ("dividiendo por max(1, ‖g‖/C)", clipping(
        "n = np.sqrt((gradientes ** 2).sum(axis=1))\nreturn gradientes / np.maximum(1.0, n / C)[:, None]")),
    ("sin cuidar el cero: min(1, C/0) = min(1, inf) = 1", clipping(
        "n = np.linalg.norm(gradientes, axis=1, keepdims=True)\n"
        "with np.errstate(divide='ignore'):\n"
        "    return gradientes * np.minimum(1.0, C / n)")),
    ("con einsum", clipping(
        "n = np.sqrt(np.einsum('ij,ij->i', gradientes, gradientes))\n"
        "factor = np.ones_like(n)\nfactor[n > C] = C / n[n > C]\nreturn gradientes * factor[:, None]")),
]

CLIP_WRONG = [
    ("la de partida: recorta la suma", clipping(
        "suma = gradientes.sum(axis=0)\nn = np.linalg.norm(suma)\nreturn suma * min(1.0, C / n)"),
     "recortas la suma"),
    ("cada coordenada", clipping("return np.clip(gradientes, -C, C)"), "cada coordenada"),
    ("norma L1", clipping(
        "n = np.abs(gradientes).sum(axis=1, keepdims=True)\n"
        "return gradientes * np.minimum(1.0, C / np.maximum(n, 1e-12))"), "norma L1"),
    ("norma L∞", clipping(
        "n = np.abs(gradientes).max(axis=1, keepdims=True)\n"
        "return gradientes * np.minimum(1.0, C / np.maximum(n, 1e-12))"), "norma L∞"),
    ("todas a norma C", clipping(
        "n = np.linalg.norm(gradientes, axis=1, keepdims=True)\nreturn gradientes * C / np.maximum(n, 1e-12)"),
     "Llevas todas las filas a norma C"),
    ("divide por cero", clipping(
        "n = np.linalg.norm(gradientes, axis=1, keepdims=True)\nreturn gradientes / n * np.minimum(n, C)"),
     "divides por ‖g‖ = 0"),
    ("C fijo en 1", clipping(
        "n = np.linalg.norm(gradientes, axis=1, keepdims=True)\n"
        "return gradientes * np.minimum(1.0, 1.0 / np.maximum(n, 1e-12))"), "usa el C que recibe"),
    ("se salta la última fila", clipping(
        "salida = gradientes.copy()\n"
        "for i in range(len(gradientes) - 1):\n"
        "    n = np.linalg.norm(gradientes[i])\n"
        "    if n > C:\n"
        "        salida[i] = gradientes[i] * C / n\n"
        "return salida"), "se salta a la última persona"),
    ("la norma de cada columna", clipping(
        "n = np.linalg.norm(gradientes, axis=0, keepdims=True)\n"
        "return gradientes * np.minimum(1.0, C / np.maximum(n, 1e-12))"), "`axis=0`"),
    ("la norma al cuadrado", clipping(
        "n = (gradientes ** 2).sum(axis=1, keepdims=True)\n"
        "return gradientes * np.minimum(1.0, C / np.maximum(n, 1e-12))"), "sin la raíz"),
]


def fedavg(body: str) -> str:
    return cell("def promediar(actualizaciones, tamanos):\n" + textwrap.indent(textwrap.dedent(body), "    "))


FEDAVG_RIGHT = [
    ("la solución", fedavg(
        "pesos = tamanos / tamanos.sum()\nreturn (pesos[:, None] * actualizaciones).sum(axis=0)")),
    ("con np.average", fedavg("return np.average(actualizaciones, axis=0, weights=tamanos)")),
    ("un cliente a la vez", fedavg(
        "total = np.zeros(actualizaciones.shape[1])\n"
        "for delta, n in zip(actualizaciones, tamanos):\n"
        "    total += n * delta\n"
        "return total / sum(tamanos)")),
    ("con un producto matricial", fedavg("return tamanos @ actualizaciones / np.sum(tamanos)")),
    ("con la biblioteca", fedavg(
        "from dpdeck.federated import average_updates\nreturn average_updates(actualizaciones, tamanos)")),
    ("con tensordot y enteros", fedavg(
        "n = int(np.sum(tamanos))\nreturn np.tensordot(np.asarray(tamanos, dtype=float), actualizaciones, 1) / n")),
]

FEDAVG_WRONG = [
    ("la de partida: promedio simple", fedavg("return actualizaciones.mean(axis=0)"), "promedio simple"),
    ("suma ponderada sin dividir", fedavg("return (tamanos[:, None] * actualizaciones).sum(axis=0)"),
     "falta dividir por"),
    ("divide por el número de clientes", fedavg(
        "return (tamanos[:, None] * actualizaciones).sum(axis=0) / len(tamanos)"), "número de clientes"),
    ("una fila por cliente", fedavg("return tamanos[:, None] * actualizaciones / tamanos.sum()"),
     "una fila por cliente"),
    ("pesos inversos", fedavg(
        "pesos = (1 / tamanos) / (1 / tamanos).sum()\nreturn (pesos[:, None] * actualizaciones).sum(axis=0)"),
     "Pesas al revés"),
    ("pesos al cuadrado", fedavg(
        "pesos = tamanos ** 2 / (tamanos ** 2).sum()\nreturn (pesos[:, None] * actualizaciones).sum(axis=0)"),
     "n_k²"),
    ("se salta el último cliente", fedavg(
        "p = tamanos[:-1] / tamanos[:-1].sum()\nreturn (p[:, None] * actualizaciones[:-1]).sum(axis=0)"),
     "Falta el último cliente"),
    ("la mediana", fedavg("return np.median(actualizaciones, axis=0)"), "Es la mediana"),
    ("devuelve el tamaño total", fedavg("return tamanos.sum()"), "se espera"),
]


def masks(body: str) -> str:
    return cell("def enmascarar(deltas, *, semillas):\n" + textwrap.indent(textwrap.dedent(body), "    "))


MASKS_RIGHT = [
    ("la solución", masks(
        "envios = deltas.copy()\n"
        "for (i, j), semilla in semillas.items():\n"
        "    m = np.random.default_rng(semilla).uniform(-1000, 1000, deltas.shape[1])\n"
        "    envios[i] += m\n"
        "    envios[j] -= m\n"
        "return envios")),
    ("recorriendo los pares", masks(
        "k, d = deltas.shape\n"
        "envios = deltas.copy()\n"
        "for i in range(k):\n"
        "    for j in range(i + 1, k):\n"
        "        m = np.random.default_rng(semillas[(i, j)]).normal(0.0, 1e4, d)\n"
        "        envios[i] = envios[i] + m\n"
        "        envios[j] = envios[j] - m\n"
        "return envios")),
    ("con np.add.at", masks(
        "pares = list(semillas)\n"
        "m = np.array([np.random.default_rng(semillas[p]).uniform(-1e6, 1e6, deltas.shape[1]) for p in pares])\n"
        "envios = deltas.astype(float).copy()\n"
        "np.add.at(envios, [i for i, _ in pares], m)\n"
        "np.add.at(envios, [j for _, j in pares], -m)\n"
        "return envios")),
    ("con un PCG64 explícito", masks(
        "envios = np.array(deltas, dtype=float)\n"
        "for (i, j), s in sorted(semillas.items()):\n"
        "    g = np.random.Generator(np.random.PCG64(s))\n"
        "    m = g.integers(-10**6, 10**6, size=deltas.shape[1]).astype(float)\n"
        "    envios[i] += m\n"
        "    envios[j] -= m\n"
        "return envios")),
    ("cada cliente con sus pares", masks(
        "k = len(deltas)\n"
        "def mascara(i, j):\n"
        "    return np.random.default_rng(semillas[(min(i, j), max(i, j))]).uniform(-500, 500, deltas.shape[1])\n"
        "return np.array([deltas[i] + sum(mascara(i, j) if i < j else -mascara(i, j)\n"
        "                                 for j in range(k) if j != i) for i in range(k)])")),
]

MASKS_WRONG = [
    ("la de partida: no resta", masks(
        "envios = deltas.copy()\n"
        "for (i, j), semilla in semillas.items():\n"
        "    m = np.random.default_rng(semilla).uniform(-1000, 1000, deltas.shape[1])\n"
        "    envios[i] += m\n"
        "return envios"), "¿Falta restarla"),
    ("la suma a los dos", masks(
        "envios = deltas.copy()\n"
        "for (i, j), semilla in semillas.items():\n"
        "    m = np.random.default_rng(semilla).uniform(-1000, 1000, deltas.shape[1])\n"
        "    envios[i] += m\n"
        "    envios[j] += m\n"
        "return envios"), "no se cancelan"),
    ("sin máscaras", masks("return deltas.copy()"), "tal cual"),
    ("una misma máscara para todos", masks(
        "m = np.random.default_rng(min(semillas.values())).uniform(-1000, 1000, deltas.shape[1])\n"
        "return deltas + m"), "la misma máscara"),
    ("máscaras pequeñas", masks(
        "envios = deltas.copy()\n"
        "for (i, j), semilla in semillas.items():\n"
        "    m = np.random.default_rng(semilla).uniform(-0.01, 0.01, deltas.shape[1])\n"
        "    envios[i] += m\n"
        "    envios[j] -= m\n"
        "return envios"), "casi los ve"),
    ("azar de np.random, no de la semilla", masks(
        "envios = deltas.copy()\n"
        "for (i, j) in semillas:\n"
        "    m = np.random.uniform(-1000, 1000, deltas.shape[1])\n"
        "    envios[i] += m\n"
        "    envios[j] -= m\n"
        "return envios"), "no salen solo de las semillas"),
    ("una semilla pública", masks(
        "envios = deltas.copy()\n"
        "publico = np.random.default_rng(0)\n"
        "for (i, j) in semillas:\n"
        "    m = publico.uniform(-1000, 1000, deltas.shape[1])\n"
        "    envios[i] += m\n"
        "    envios[j] -= m\n"
        "return envios"), "no salen de las semillas de los pares"),
    ("máscaras de un repartidor que suman cero", masks(
        "repartidor = np.random.default_rng(sum(semillas.values()))\n"
        "m = repartidor.uniform(-1000, 1000, deltas.shape)\n"
        "return deltas + m - m.mean(axis=0)"), "no son de los pares"),
    ("un repartidor con la semilla del primer par", masks(
        "m = np.random.default_rng(semillas[(0, 1)]).uniform(-1000, 1000, deltas.shape)\n"
        "m[-1] = -m[:-1].sum(axis=0)\n"
        "return deltas + m"), "no son de los pares"),
    ("una máscara propia por cliente", masks(
        "envios = deltas.copy()\n"
        "for (i, j), semilla in semillas.items():\n"
        "    envios[i] += np.random.default_rng(semilla).uniform(-1000, 1000, deltas.shape[1])\n"
        "    envios[j] -= np.random.default_rng(semilla + 1).uniform(-1000, 1000, deltas.shape[1])\n"
        "return envios"), "no se cancelan"),
]


def challenge(measurement: str, *, conclusion: str = "La señal de 1 queda bajo unas cuatro unidades de ruido.",
              limitation: str = "Un atacante que repite la consulta promedia el ruido y lo achica.",
              assumption: str = "Restar dos conteos con ruido ya no revela a Karen.", seed: str = "0") -> str:
    return cell(f"semilla = {seed}\nstudent_extension = {{\n"
                f"    'assumption': {assumption!r},\n"
                f"    'measurement': {measurement!r},\n"
                f"    'conclusion': {conclusion!r},\n"
                f"    'limitation': {limitation!r},\n}}\n")


CHALLENGE_RIGHT = [
    ("cita la desviación, 4,02", challenge("La resta tiene desviación 4,02 con ε = 0,5 por consulta.")),
    ("cita con punto decimal", challenge("La resta medida tiene desviación estándar 4.02.")),
    ("cita un conteo exacto, 1221", challenge("Con todos cuenta 1221 y sin Karen, uno menos.")),
    ("cita un porcentaje", challenge("El atacante detecta al extremo el 73,25 % de las veces.")),
    ("cita el error de la edad con ruido", challenge("Con ruido z = 1 la edad reconstruida yerra 13,4 años.",
                                                     conclusion="El ruido tapa la edad de Karen: 13,4358 años.")),
]

CHALLENGE_WRONG = [
    ("un número inventado", challenge("La resta tiene desviación 7,77."), "tienen que citar un número"),
    ("solo entradas del laboratorio", challenge("Usé ε = 0,5 y 2000 ataques."), "tienen que citar un número"),
    ("un número de otra semilla", challenge("La resta tiene desviación 4,02.", seed="1"),
     "tienen que citar un número"),
    ("con dos cifras nada más", challenge("La resta tiene desviación 4,0."), "al menos 3"),
    ("una limitación copiada", cell(
        "from dpdeck import lab\n"
        "semilla = 0\n"
        "student_extension = {'assumption': 'Restar dos conteos con ruido ya no revela a Karen.',\n"
        "    'measurement': 'La resta tiene desviación 4,02 con ε = 0,5.',\n"
        "    'conclusion': 'La señal de 1 queda bajo unas cuatro unidades de ruido.',\n"
        "    'limitation': lab.run_lab(0)['limitations'][0]}\n"), "ya está en la lista"),
    ("un campo vacío", challenge("La resta tiene desviación 4,02.", conclusion=""), "falta"),
    ("un campo demasiado corto", challenge("La resta tiene desviación 4,02.", limitation="ruido"),
     "demasiado corto"),
    ("una clave de más", cell(
        "semilla = 0\nstudent_extension = {'assumption': 'Restar dos conteos con ruido ya no revela a Karen.',\n"
        "    'measurement': 'La resta tiene desviación 4,02.', 'conclusion': 'La señal queda bajo el ruido.',\n"
        "    'limitation': 'Un atacante que repite la consulta promedia.', 'riesgo': 'otro texto largo'}\n"),
     "Clave desconocida"),
    ("una lista en vez de un diccionario", cell("semilla = 0\nstudent_extension = ['assumption']\n"),
     "debe ser un diccionario"),
    ("una semilla que no sirve", challenge("La resta tiene desviación 4,02.", seed="-3"), "La semilla no sirve"),
]


BANK = {
    "laplace-escala": {"right": LAPLACE_RIGHT, "wrong": LAPLACE_WRONG},
    "presupuesto": {"right": BUDGET_RIGHT, "wrong": BUDGET_WRONG},
    "suma-recortada": {"right": CLIPPED_SUM_RIGHT, "wrong": CLIPPED_SUM_WRONG},
    "sigma-gaussiano": {"right": SIGMA_RIGHT, "wrong": SIGMA_WRONG},
    "recorte-por-persona": {"right": CLIP_RIGHT, "wrong": CLIP_WRONG},
    "promedio-fedavg": {"right": FEDAVG_RIGHT, "wrong": FEDAVG_WRONG},
    "mascaras-pares": {"right": MASKS_RIGHT, "wrong": MASKS_WRONG},
    "reto-laboratorio": {"right": CHALLENGE_RIGHT, "wrong": CHALLENGE_WRONG},
}
