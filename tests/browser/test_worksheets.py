"""The worksheets a student takes home, linked from the menu (dist/, headless Chromium).

* The menu (☰, M) shows under each chapter's heading its two worksheets,
  «Ejercicios (.ipynb)» (notebook_student.ipynb, the exercises blank) and
  «Soluciones (.ipynb)» (notebook_solution.ipynb), one pair per chapter of
  notebooks/index.json; each link's address is that file of dist/, which a
  browser fetching it gets byte for byte, a valid notebook of its chapter and
  kind; a click downloads it under the chapter's name.
* Under a sub-path of a plain server, after one visit, with the server gone,
  the reloaded deck still downloads them (the service worker keeps them).
"""

from __future__ import annotations

import hashlib
import json
import shutil

import nbformat
import pytest

from deckpage import DeckPage
from test_service_worker import Server, wait_offline

# The deck's service worker runs here (elsewhere it is blocked): the worksheets download from its copy offline.
pytestmark = pytest.mark.service_worker

FLAVOURS = ("student", "solution")
TEXTS = {"student": "Ejercicios (.ipynb)", "solution": "Soluciones (.ipynb)"}

# What a browser gets at an address: its status and the SHA-256 of its body.
FETCHED = """
async (url) => {
  const response = await fetch(url);
  const digest = await crypto.subtle.digest('SHA-256', await response.arrayBuffer());
  return {status: response.status, sha256: Array.from(new Uint8Array(digest),
          (byte) => byte.toString(16).padStart(2, '0')).join('')};
}
"""



def chapters_of(dist) -> list[dict]:
    return json.loads((dist / "notebooks" / "index.json").read_text(encoding="utf-8"))["chapters"]


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_the_menu_links_each_chapters_two_worksheets_to_their_files_in_dist(new_deck, deck_url, dist_dir):
    chapters = chapters_of(dist_dir)
    deck = new_deck(deck_url + "index.html?autorun=0")
    deck.wait_for_cells()
    deck.open_menu()
    links = deck.worksheet_links(len(chapters))
    expected = [(chapter["name"], flavour, deck_url + chapter["notebooks"][flavour],
                 f"{chapter['name']}-{'ejercicios' if flavour == 'student' else 'soluciones'}.ipynb", TEXTS[flavour])
                for chapter in chapters for flavour in FLAVOURS]
    assert [(link["chapter"], link["flavour"], link["href"], link["name"], link["text"]) for link in links] == expected
    # Each under its own chapter's heading: «1 · …» to «6 · …», and the closing chapter's.
    headings = [link["heading"] for link in links[::2]]
    assert [heading.split(" · ")[0] for heading in headings[:6]] == ["1", "2", "3", "4", "5", "6"]
    assert len(set(headings)) == len(chapters)

    for chapter in chapters:
        for flavour in FLAVOURS:
            relative = chapter["notebooks"][flavour]
            data = (dist_dir / relative).read_bytes()
            fetched = deck.page.evaluate(FETCHED, deck_url + relative)
            assert fetched == {"status": 200, "sha256": sha256(data)}, relative
            notebook = nbformat.reads(data.decode("utf-8"), as_version=4)
            nbformat.validate(notebook)
            assert notebook.metadata["dpdeck"]["chapter"] == chapter["name"]
            assert notebook.metadata["dpdeck"]["flavour"] == flavour
            marked = [cell.id for cell in notebook.cells if {"cell", "challenge"} & set(cell.metadata.get("dpdeck", {}))]
            assert marked == chapter["exercises"], relative

    first = chapters[0]
    name, data = deck.download_worksheet(first["name"], "student")
    assert name == f"{first['name']}-ejercicios.ipynb"
    assert data == (dist_dir / first["notebooks"]["student"]).read_bytes()
    assert "Descargado" in deck.page.inner_text(
        f'dialog.deck-menu [data-chapter="{first["name"]}"] a[data-worksheet="student"]')


def test_after_one_visit_the_worksheets_download_with_the_server_gone(new_deck, dist_dir, tmp_path):
    # The deck under a sub-path of a plain server; Python's files are not needed to read and download.
    folder = tmp_path / "mazo"
    shutil.copytree(dist_dir, folder, ignore=shutil.ignore_patterns("pyodide"))
    chapters = chapters_of(folder)
    server = Server(folder, plain=True)
    try:
        deck = new_deck(python=False)
        deck.goto(server.url + "?autorun=0")
        deck.wait_for_cells()
        wait_offline(deck, python=False)
    finally:
        server.stop()
    assert deck.python_state == "off"

    deck.page.reload()
    deck.wait_for_cells()
    assert deck.page.evaluate("() => navigator.serviceWorker.controller !== null")
    deck.open_menu()
    links = deck.worksheet_links(len(chapters))
    assert {link["href"] for link in links} == {server.url + chapter["notebooks"][flavour]
                                                for chapter in chapters for flavour in FLAVOURS}
    last = chapters[-1]
    for flavour in FLAVOURS:
        name, data = deck.download_worksheet(last["name"], flavour)
        assert data == (folder / last["notebooks"][flavour]).read_bytes(), name
