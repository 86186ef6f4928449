"""dpdeck: privacidad diferencial en código, para una clase que se ejecuta en el navegador.

El paquete reúne todo el Python que corren las celdas de las diapositivas, en
capas que solo importan hacia abajo:

* ``dpdeck._checks``: validadores de parámetros con mensajes en español.
* ``dpdeck.numbers``: cómo se escriben los números (coma decimal, miles con espacio).
* ``dpdeck.accounting``: composición secuencial, avanzada y de Rényi, y el libro
  de cuentas ``PrivacyLedger``.
* ``dpdeck.mechanisms``: mecanismos de Laplace y de Gauss (calibración y muestreo),
  en punto flotante y discretos exactos: el único lugar que muestrea ruido.
* ``dpdeck.attacks``: el ataque de punto flotante de Mironov (2012) y la cota de ε-DP.
* ``dpdeck.queries``: conteos, histogramas, sumas recortadas y promedios privados.
* ``dpdeck.data``: el censo sintético de 5000 personas (``load_census()``).
* ``dpdeck.learning``: regresión logística y descenso de gradiente privado.
* ``dpdeck.federated``: aprendizaje federado (capítulo 6): FedAvg, fugas por
  gradientes, agregación segura como modelo de enseñanza y DP-FedAvg.
* ``dpdeck.experiments``: los experimentos de la clase, con los parámetros de su
  diapositiva (los usan las celdas, el laboratorio y el banco de tiempos).
* ``dpdeck.figure_style``: el estilo común de las figuras (tamaños, colores, coma
  decimal, piezas de ejes).
* ``dpdeck.figures`` y ``dpdeck.figures_federated``: una función por figura de la
  clase (capítulos 1–5 y capítulo 6, matplotlib); solo dibujan.
* ``dpdeck.lab``: el laboratorio reproducible (``python -m dpdeck.lab --seed 0``);
  ``dpdeck.lab_federated`` es su paso del capítulo 6.
* ``dpdeck.bench``: tiempos de cada cálculo (``python -m dpdeck.bench``).

Importar ``dpdeck`` no importa ningún submódulo: cada celda importa lo que usa,
y así ninguna paga el costo de matplotlib si no dibuja.

Es código de enseñanza, no de producción: el ruido se muestrea en punto
flotante (vulnerable al ataque de Mironov 2012; los mecanismos discretos de
``dpdeck.mechanisms`` no lo son), la privacidad es por registro
y no por usuario, y los datos son sintéticos.
"""

__version__ = "0.1.0"
