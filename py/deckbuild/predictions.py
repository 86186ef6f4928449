"""Each «Predice antes de ejecutar» checked against what its cell prints: a question can never disagree with its cell.

Stage: (`Deck`, `Prerendered`) → nothing, or `SourceError` at the line of the
choice that is wrong. A `::: prediccion` (deck/README.md, «Predict, then run»)
marks one choice as what the cell prints; once the build has run the cell
natively, that choice must appear in the text the cell printed (its stdout and
the value of its last expression) and no other choice may. Appearing means as
a whole: `2` is in «b = 2» but not in «0,25» nor in «12»; runs of spaces count
as one.
"""

from __future__ import annotations

import re

from dpdeck.classroom import protocol

from .deckmodel import PREDICTION, Deck
from .errors import SourceError
from .prerender import Prerendered

# Spaces a number may be grouped with (dpdeck.numbers) count as a plain space.
SPACES = re.compile(r"[\s\u00a0\u202f\u2009]+")
PRINTED_KINDS = (protocol.OUTPUT.STREAM, protocol.OUTPUT.VALUE)


def printed_text(outputs) -> str:
    """What a cell showed as text: its stdout and its last expression's value, spaces folded."""
    parts = [output.get("text", "") for output in outputs if output.get("type") in PRINTED_KINDS
             and output.get("name", protocol.STREAM.STDOUT) != protocol.STREAM.STDERR]
    return SPACES.sub(" ", "\n".join(parts))


def appears_in(choice: str, printed: str) -> bool:
    """Whether `choice` is printed as a whole (not inside a longer word or number)."""
    folded = SPACES.sub(" ", choice.strip())
    pattern = r"(?<![\w])(?<!\d[.,])" + re.escape(folded) + r"(?![\w])(?![.,]\d)"
    return re.search(pattern, printed) is not None


def check_predictions(deck: Deck, prerendered: Prerendered) -> int:
    """Raise SourceError for the first prediction whose marked choice is not what its cell prints; count them."""
    checked = 0
    for cell in deck.cells:
        prediction = cell.prediction
        if prediction is None:
            continue
        outcome = prerendered.outcomes.get(cell.id)
        printed = printed_text(outcome.outputs if outcome else ())
        shown = printed.strip()[:120] or "nada"
        found = [index for index, choice in enumerate(prediction.choices) if appears_in(choice, printed)]
        right = prediction.answer
        if right not in found:
            raise SourceError(cell.file, prediction.choice_lines[right],
                              f"la opción marcada `{prediction.choices[right]}` no es lo que imprime la celda "
                              f"«{cell.id}» (imprime: {shown}); corrige la pregunta o marca otra opción")
        others = [index for index in found if index != right]
        if others:
            raise SourceError(cell.file, prediction.choice_lines[others[0]],
                              f"la celda «{cell.id}» también imprime `{prediction.choices[others[0]]}`: con dos "
                              f"opciones a la vista la «::: {PREDICTION}» no tiene una sola respuesta; "
                              "elige opciones que la salida no contenga")
        checked += 1
    return checked
