"""``python -m dpdeck.lab [--seed N] [--extension archivo.json]``: el laboratorio en JSON (``dpdeck.lab.main``)."""

import sys

if not __package__:
    # Run as a loose file, the package's relative imports have no package to resolve against.
    sys.exit("El laboratorio es un módulo del paquete dpdeck: ejecútalo con «python -m dpdeck.lab --seed N» "
             "(con la carpeta py/ en PYTHONPATH, o con dpdeck instalado).")

from . import main  # noqa: E402 (after the guard above)

sys.exit(main())
