"""Las comprobaciones de los ejercicios, con el nombre que usan los cuadernos de la clase.

En un cuaderno Jupyter, la celda «Comprobar» de un ejercicio es::

    from dpdeck.exercises import check
    check("laplace-escala", globals())

Las comprobaciones viven con la maquinaria del aula, en
``dpdeck.classroom.exercises`` (una por ejercicio, por capítulo, sobre un
conjunto común de pruebas estadísticas); este módulo les da el nombre corto
que ven los estudiantes y no define nada propio.
"""

from .classroom.exercises import *  # noqa: F401,F403 (the same public names)
from .classroom.exercises import __all__  # noqa: F401
