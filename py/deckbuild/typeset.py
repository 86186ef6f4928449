"""Every formula of the deck typeset with KaTeX at build time.

Stage: `Deck.math` → {MathKey: HTML}. One node process renders them all; an
expression KaTeX rejects stops the build at the file and line where it first
appears.
"""

from __future__ import annotations

import json

from .commands import run_node_script
from .deckmodel import Deck, MathKey
from .errors import SourceError
from .paths import locate_npm_package


def typeset_math(deck: Deck) -> dict[MathKey, str]:
    """Typeset every expression with KaTeX in one node process."""
    keys = list(deck.math)
    if not keys:
        return {}
    answers = json.loads(run_node_script("katex.js", locate_npm_package("katex"), what="KaTeX (node)",
                                         input_text=json.dumps(keys)))
    rendered = {}
    for key, answer in zip(keys, answers):
        if "error" in answer:
            path, line = deck.math[key]
            raise SourceError(path, line, f"fórmula que KaTeX no entiende: {answer['error']}")
        rendered[key] = answer["html"]
    return rendered
