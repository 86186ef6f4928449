"""dpdeck: privacidad diferencial en código, para una clase que se ejecuta en el navegador.

El paquete reúne todo el Python que corren las celdas de las diapositivas. En
su raíz está la biblioteca que enseña la clase, en capas que solo importan
hacia abajo:

* ``dpdeck._checks``: validadores de parámetros con mensajes en español.
* ``dpdeck.numbers``: cómo se escriben los números (coma decimal, miles con espacio).
* ``dpdeck.accounting``: composición secuencial, avanzada y de Rényi, y el libro
  de cuentas ``PrivacyLedger``; las curvas de Rényi DP y su conversión a (ε, δ)
  están en ``dpdeck.renyi`` (y se importan desde ``dpdeck.accounting``).
* ``dpdeck.mechanisms``: mecanismos de Laplace y de Gauss (calibración y muestreo),
  en punto flotante y discretos exactos: el único lugar que muestrea ruido.
* ``dpdeck.attacks``: el ataque de punto flotante de Mironov (2012) y la cota de ε-DP.
* ``dpdeck.queries``: conteos, histogramas, sumas recortadas y promedios privados.
* ``dpdeck.data``: el censo sintético de 5000 personas (``load_census()``).
* ``dpdeck.learning``: regresión logística y descenso de gradiente privado.
* ``dpdeck.federated``: aprendizaje federado (capítulo 6), un módulo por pieza:
  el reparto entre clientes, FedAvg (``averaging``), fugas por gradientes
  (``leakage``), agregación segura como modelo de enseñanza
  (``secure_aggregation``) y DP-FedAvg (``private_training``).
* ``dpdeck.experiments``: los experimentos de la clase, con los parámetros de su
  diapositiva (los usan las celdas, el laboratorio y el banco de tiempos).
* ``dpdeck.figure_style``: el estilo común de las figuras (tamaños, colores, coma
  decimal, piezas de ejes); ``dpdeck.figure_descriptions``: la frase que dice
  lo que muestra cada figura (su texto alternativo).
* ``dpdeck.figures`` y ``dpdeck.figures_federated``: una función por figura de la
  clase (capítulos 1–5 y capítulo 6, matplotlib); solo dibujan.
* ``dpdeck.lab``: el laboratorio reproducible (``python -m dpdeck.lab --seed 0``);
  ``dpdeck.lab.federated`` es su paso del capítulo 6.

La maquinaria del aula, que ejecuta y comprueba las celdas, está aparte, en
``dpdeck.classroom`` (la biblioteca no la importa nunca):

* ``dpdeck.classroom.protocol``: el contrato de las celdas en vivo (``protocol.json``).
* ``dpdeck.classroom.cellrun``: ``run_cell``, una celda ejecutada como en un
  cuaderno; ``dpdeck.classroom.cellerrors``: sus errores en español;
  ``dpdeck.classroom.cellguard``: lo que una celda no puede dejar cambiado.
* ``dpdeck.classroom.exercises``: la comprobación de cada ejercicio, por
  capítulo; los cuadernos la importan con su nombre corto, ``dpdeck.exercises``.
* ``dpdeck.classroom.bench``: tiempos de cada cálculo
  (``python -m dpdeck.classroom.bench``).

Importar ``dpdeck`` no importa ningún submódulo: cada celda importa lo que usa,
y así ninguna paga el costo de matplotlib si no dibuja.

Es código de enseñanza, no de producción: el ruido se muestrea en punto
flotante (vulnerable al ataque de Mironov 2012; los mecanismos discretos de
``dpdeck.mechanisms`` no lo son), la privacidad es por registro
y no por usuario, y los datos son sintéticos.
"""

__version__ = "0.1.0"
