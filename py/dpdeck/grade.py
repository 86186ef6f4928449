"""La corrección de la clase: ``python -m dpdeck.grade CARPETA``.

Vuelve a comprobar, con Python nativo, cada ejercicio de los trabajos que
exportaron los estudiantes («Exportar mi trabajo») y escribe ``clase.csv`` y
``resumen.md`` en la carpeta. Vive con la maquinaria del aula, en
``dpdeck.classroom.grading``; este módulo solo le da el nombre corto.
"""

import sys

from .classroom.grading import main

if __name__ == "__main__":
    sys.exit(main())
