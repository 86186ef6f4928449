"""Aprendizaje federado: FedAvg, fugas por gradientes, agregación segura y DP sobre el agregado.

Capítulo 6 de la clase. El censo se reparte entre K clientes (hospitales,
teléfonos) que entrenan la regresión logística del capítulo 5 sin que sus
datos salgan de casa; el servidor solo recibe actualizaciones del modelo. Cuatro
piezas, cada una con su referencia:

1. **FedAvg** (McMahan, Moore, Ramage, Hampson y Agüera y Arcas 2017,
   "Communication-Efficient Learning of Deep Networks from Decentralized
   Data", AISTATS, Algoritmo 1): en cada ronda una fracción C de los clientes
   entrena E épocas locales y el servidor promedia los modelos con pesos
   n_k/n. Aquí cada época local es un paso de descenso de gradiente de lote
   completo (B = ∞ en la notación del artículo).
2. **Fugas por gradientes** (Zhu, Liu y Han 2019, "Deep Leakage from
   Gradients", NeurIPS): en la regresión logística el gradiente de una sola
   persona es (σ(x·θ) − y)·x, un múltiplo de sus datos; dividirlo por su
   componente del intercepto devuelve x exacto (Phong et al. 2018 lo
   observaron para este modelo).
3. **Agregación segura** (Bonawitz et al. 2017, "Practical Secure Aggregation
   for Privacy-Preserving Machine Learning", CCS): máscaras por pares que se
   cancelan en la suma, y semillas repartidas con el esquema de Shamir (1979)
   para recuperar la suma cuando un cliente se cae a mitad de ronda. Es un
   MODELO DE ENSEÑANZA: sin criptografía (la "PRG" es numpy, no un cifrador),
   sin acuerdo de claves (las semillas se sortean como si los pares las
   hubieran acordado), sin doble máscara, y con un servidor honesto pero
   curioso.
4. **DP sobre el agregado** (McMahan, Ramage, Talwar y Zhang 2018, "Learning
   Differentially Private Recurrent Language Models", ICLR): con la misma
   historia que el capítulo 5. Bases vecinas agregan o quitan un cliente, así
   que el número de clientes K también es un dato y se estima en privado con
   el 5 % de ε; cada actualización se recorta a norma L2 ≤ S, el servidor
   suma ruido N(0, (zS)² I) a la suma y divide por un denominador fijo, los
   clientes esperados por ronda C·K̂; el libro de cuentas
   (``accounting.PrivacyLedger``) anota el conteo y las T sumas.

Una pieza por módulo: ``clients`` (el reparto de los datos), ``averaging``
(1), ``leakage`` (2), ``secure_aggregation`` (3) y ``private_training`` (4);
este paquete reúne sus nombres públicos, así que ``from dpdeck.federated import
train_federated`` sirve para todos.

Capas: estos módulos solo llaman a ``learning`` (modelo, gradientes y la
calibración del descenso privado) y ``mechanisms`` (todo el ruido de
privacidad). Las máscaras, los coeficientes de Shamir, la elección de
clientes y los repartos usan ``rng`` directamente: son el azar del protocolo,
no ruido de privacidad. El laboratorio del capítulo está en
``dpdeck.lab.federated``.

Código de enseñanza: censo sintético (no datos de hospitales), privacidad por
cliente (una persona si cada cliente tiene una fila), y la contabilidad no
aprovecha la amplificación por submuestreo de clientes (cuenta cada ronda
como si participaran todos: una cota válida, más pesimista).
"""

from __future__ import annotations

from .clients import (
    AGE_COLUMN,
    DEFAULT_UPDATE_CLIP,
    EDUCATION_COLUMN,
    count_examples,
    split_by_group,
    split_iid,
)
from .averaging import (
    average_updates,
    compare_local_epochs,
    compare_splits,
    rounds_to_reach,
    select_clients,
    split_census_task,
    train_clients,
    train_federated,
)
from .leakage import (
    compute_device_update,
    decode_features,
    infer_high_income,
    measure_leakage,
    privatize_update,
    reconstruct_features,
)
from .secure_aggregation import (
    FIXED_POINT_SCALE,
    MASK_MODULUS,
    SHARE_PRIME,
    decode_fixed_point,
    encode_fixed_point,
    expand_mask,
    mask_update,
    reconstruct_secret,
    run_secure_aggregation,
    setup_secure_aggregation,
    share_secret,
    sum_masked,
    unmask_sum,
)
from .private_training import (
    EDUCATION_BANDS,
    calibrate_rounds,
    compare_noise_and_step,
    compare_privacy_units,
    measure_subgroup_accuracy,
    train_federated_privately,
)

__all__ = [
    "AGE_COLUMN",
    "EDUCATION_COLUMN",
    "DEFAULT_UPDATE_CLIP",
    "MASK_MODULUS",
    "FIXED_POINT_SCALE",
    "SHARE_PRIME",
    # reparto de los datos
    "split_iid",
    "split_by_group",
    "count_examples",
    # FedAvg
    "select_clients",
    "train_clients",
    "average_updates",
    "train_federated",
    "rounds_to_reach",
    "split_census_task",
    "compare_splits",
    "compare_local_epochs",
    # fugas por gradientes
    "compute_device_update",
    "reconstruct_features",
    "decode_features",
    "infer_high_income",
    "privatize_update",
    "measure_leakage",
    # agregación segura
    "encode_fixed_point",
    "decode_fixed_point",
    "share_secret",
    "reconstruct_secret",
    "setup_secure_aggregation",
    "expand_mask",
    "mask_update",
    "sum_masked",
    "unmask_sum",
    "run_secure_aggregation",
    # DP sobre el agregado
    "calibrate_rounds",
    "train_federated_privately",
    "compare_privacy_units",
    "compare_noise_and_step",
    "EDUCATION_BANDS",
    "measure_subgroup_accuracy",
]

