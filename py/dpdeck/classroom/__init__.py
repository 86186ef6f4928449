"""La maquinaria del aula: lo que ejecuta y comprueba las celdas, no lo que la clase enseña.

* ``dpdeck.classroom.protocol``: el contrato de las celdas en vivo
  (``protocol.json``), el mismo para la página, el *worker* y la construcción.
* ``dpdeck.classroom.cellrun``: ``run_cell``, ejecutar una celda como un
  cuaderno y devolver sus salidas (texto, valor, figuras, errores en español);
  ``dpdeck.classroom.cellguard``: lo que una celda no puede dejar cambiado
  para las demás (y ``run_untouched``, con el que se comprueba un ejercicio).
* ``dpdeck.classroom.exercises``: la comprobación de cada ejercicio, por
  capítulo, con su veredicto (los cuadernos la importan como ``dpdeck.exercises``).
* ``dpdeck.classroom.bench``: tiempos de cada cálculo
  (``python -m dpdeck.classroom.bench``).

La biblioteca que enseñan las diapositivas (``dpdeck.mechanisms``,
``dpdeck.accounting``…) no importa nada de aquí; este paquete sí la usa.
"""
