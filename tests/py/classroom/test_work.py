"""Pruebas de dpdeck.classroom.work: el trabajo exportado, igual escrito por la página que leído por Python.

The page writes the file (deck/js/page/workfile.js, bundled by esbuild and run
under node here); Python reads it. Both must compute the same canonical JSON
and the same SHA-256 for every value a work can hold, or every honest file
would read as tampered. A file cut short, of another format, edited after
export or with impossible contents is refused with one Spanish sentence.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from pathlib import Path

import pytest

from deckjs import run_with_module
from dpdeck.classroom import work
from dpdeck.classroom.protocol import WORK_FORMAT, WORK_MAX_BYTES, WORK_VERSION

ROOT = Path(__file__).resolve().parents[3]
WORKFILE_JS = ROOT / "deck" / "js" / "page" / "workfile.js"

# Values a work holds, with what trips a careless canonical form: key order,
# quotes and backslashes, control characters, accents, astral characters, nesting.
TRICKY_PARTS = {
    "deck": {"title": "Privacidad Diferencial", "id": "privacidad-diferencial"},
    "checkers": "0123456789ab",
    "student": "Ñandú \"el de la fila 3\" \\ Pérez",
    "exportedAt": "2026-12-06T10:15:00.000Z",
    "edits": {"celda-b": "print('ε = 0,5')\n\tx = 1\r\n", "celda-a": "s = '\u0001\u001f\u007f'  # 😀 \u2028"},
    "exercises": {"ejercicio-laplace": {"check": "laplace-escala", "source": "def f():\n    return 1\n",
                                        "edited": True, "browserVerdict": {"passed": False, "at": "t"}}},
    "challenge": {"seed": 7, "extension": {"assumption": "x", "measurement": "4,02", "conclusion": "",
                                           "limitation": "—"}},
    "predictions": {"laplace-hospital": {"choice": "2", "answer": "2"}},
}

MAKE_WORK_JS = r"""
const [partsJson] = process.argv.slice(1);
const m = deckModule.exports;
const parts = JSON.parse(partsJson);
process.stdout.write(JSON.stringify({
  canonical: m.canonicalJson(parts),
  work: m.makeWork(parts),
  digests: ['', 'abc', 'a'.repeat(55), 'a'.repeat(56), 'a'.repeat(64), 'ñ'.repeat(1000)]
    .map((text) => m.sha256Hex(new TextEncoder().encode(text))),
  slugs: ['Ana Pérez', '  ', 'Ñandú / 2º'].map(m.slug),
}));
"""


@pytest.fixture(scope="module")
def page_made() -> dict:
    result = run_with_module(WORKFILE_JS, MAKE_WORK_JS, json.dumps(TRICKY_PARTS), timeout=60)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def valid_document(**changes) -> dict:
    """A work as the page makes it (format, version, digest), with `changes` before the digest."""
    document = {"format": WORK_FORMAT, "version": WORK_VERSION, **copy.deepcopy(TRICKY_PARTS), **changes}
    document["sha256"] = work.work_digest(document)
    return document


def as_bytes(document: dict) -> bytes:
    return json.dumps(document, ensure_ascii=False, indent=1).encode("utf-8")


# ----------------------------------------------------------- page and Python agree


def test_the_page_and_python_write_the_same_canonical_json(page_made):
    expected = work.canonical_json(TRICKY_PARTS)
    assert page_made["canonical"] == expected
    # Keys sorted at every level, no spaces, nothing but what JSON needs escaped.
    assert expected.startswith('{"challenge":{"extension":{"assumption"')
    assert "😀" in expected and "\\u0001" in expected and "Ñandú \\\"el" in expected


def test_a_work_the_page_makes_reads_in_python(page_made):
    made = page_made["work"]
    assert made["format"] == WORK_FORMAT and made["version"] == WORK_VERSION
    assert made["sha256"] == work.work_digest(made)
    read = work.parse_work(json.dumps(made, ensure_ascii=False, indent=1).encode("utf-8"))
    assert read.student == TRICKY_PARTS["student"]
    assert read.edits["celda-a"] == TRICKY_PARTS["edits"]["celda-a"]
    assert read.exercises["ejercicio-laplace"]["check"] == "laplace-escala"


def test_the_pages_sha256_is_sha256(page_made):
    texts = ["", "abc", "a" * 55, "a" * 56, "a" * 64, "ñ" * 1000]   # the padding's edge cases
    assert page_made["digests"] == [hashlib.sha256(text.encode()).hexdigest() for text in texts]


def test_file_names_take_a_plain_slug_of_the_name(page_made):
    assert page_made["slugs"] == ["ana-perez", "", "nandu-2"]


# ----------------------------------------------------------- what is refused


@pytest.mark.parametrize("cut", [1, 40, 200, -30, -2])
def test_a_file_cut_short_says_it_is_cut(cut):
    data = as_bytes(valid_document())
    with pytest.raises(work.WorkError, match="está cortado"):
        work.parse_work(data[:cut])


def test_a_file_edited_after_export_is_refused_even_when_it_stays_valid_json():
    document = valid_document()
    document["exercises"]["ejercicio-laplace"]["browserVerdict"]["passed"] = True
    with pytest.raises(work.WorkError, match="se modificó después de exportarlo"):
        work.parse_work(as_bytes(document))
    document = valid_document()
    document["sha256"] = "0" * 64
    with pytest.raises(work.WorkError, match="se modificó"):
        work.parse_work(as_bytes(document))


@pytest.mark.parametrize("data, reason", [
    (b"", "está vacío"),
    (b"\xff\xfe{}", "no es texto UTF-8"),
    (b'{"a": 1} x', "no es JSON válido"),
    (b"[1, 2]", "no es un trabajo exportado por el mazo"),
    (json.dumps({"format": "jupyter"}).encode(), "no es un trabajo exportado"),
    (json.dumps({"format": WORK_FORMAT, "version": 99}).encode(), "versión 99"),
])
def test_what_is_not_a_work_gets_one_reason(data, reason):
    with pytest.raises(work.WorkError, match=reason):
        work.parse_work(data)


@pytest.mark.parametrize("changes, reason", [
    ({"edits": {"../etc": "x"}}, "nombra una celda que no puede existir"),
    ({"edits": {"celda": 3}}, "no es texto"),
    ({"edits": {f"c{index}": "" for index in range(501)}}, "entradas"),
    ({"exercises": {"ejercicio": {"source": "x"}}}, "no dice qué comprobación"),
    ({"predictions": {"celda": {"answer": "2"}}}, "no dice qué se eligió"),
    ({"challenge": {"seed": 0}}, "reto del laboratorio"),
    ({"deck": {"title": "Sin id"}}, "le falta el campo «id»"),
])
def test_impossible_contents_are_refused_with_their_reason(changes, reason):
    with pytest.raises(work.WorkError, match=reason):
        work.parse_work(as_bytes(valid_document(**changes)))


def test_a_file_over_the_size_limit_is_refused_before_it_is_read(tmp_path):
    path = tmp_path / "enorme.json"
    path.write_bytes(b" " * (WORK_MAX_BYTES + 1))
    with pytest.raises(work.WorkError, match="pesa"):
        work.read_work(path)


# ----------------------------------------------------------- names


def test_the_checker_version_is_a_short_stable_fingerprint_of_the_checks():
    version = work.checker_version()
    assert re.fullmatch(r"[0-9a-f]{12}", version)
    assert work.checker_version() == version


def test_the_deck_id_comes_from_its_title():
    assert work.deck_id("Privacidad Diferencial") == "privacidad-diferencial"
    assert work.deck_id("Señales: ¿ruido?") == "senales-ruido"
    assert work.deck_id("¡!") == "mazo"
