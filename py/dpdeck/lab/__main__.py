"""``python -m dpdeck.lab [--seed N] [--extension archivo.json]``: el laboratorio en JSON (``dpdeck.lab.main``)."""

import sys

from . import main

sys.exit(main())
