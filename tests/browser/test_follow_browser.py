"""Following the lecturer, end to end in Chromium: one lecturer and two students.

The fixture deck (tests/browser/conftest.py's cells_dist) is served as
`build.py serve --host 0.0.0.0` serves it: the deck's server with the follow
channel (deckbuild.follow), on loopback. Python is downloaded only for the
cell that tries the channel: following is the page's, not Python's.

* The lecturer's deck, opened with ?profesor=KEY, takes the key out of the
  address and says «En directo» with how many follow.
* Two students press «Seguir al profesor» and go where the lecturer goes;
  one moves on their own and stops following at once (the other still
  follows), then «Volver con el profesor» takes them to the lecturer's slide
  and they follow again; pressing «Siguiendo al profesor» stops.
* A wrong key publishes nothing and the lecturer's deck says so; the students
  never move.
* A cell can neither listen to the channel nor publish on it, however it
  names it (deck/js/worker/netguard.js): the server never sees the request.
* On a plain static server, and on the deck's server without a channel, there
  is no button and no request to the channel at all.
"""

from __future__ import annotations

import threading

import pytest

from deckbuild.follow import FollowChannel, new_key
from deckbuild.server import make_server
from deckpage import DeckPage
from dpdeck.classroom.protocol import FOLLOW

FOLLOW_SEGMENT = FOLLOW["events"].split("/")[0]
PILL_STATE = "([state]) => document.querySelector('.follow-pill')?.dataset.state === state"
PILL_TEXT = "([text]) => (document.querySelector('.follow-pill')?.textContent || '').includes(text)"


@pytest.fixture(scope="module")
def classroom(cells_dist):
    """The fixture deck on the deck's server with a follow channel: (url, key, channel)."""
    key = new_key()
    channel = FollowChannel(key)
    server = make_server(cells_dist, 0, follow=channel)
    threading.Thread(target=server.serve_forever, name="servidor-del-aula", daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/", key, channel
    server.shutdown()
    server.server_close()


def open_deck(new_deck, url: str) -> DeckPage:
    """The deck at `url`, once the page has had the answer to its one HEAD request (whether to offer following)."""
    deck = new_deck(python=False)
    with deck.page.expect_response(lambda response: response.request.method == "HEAD", timeout=30_000):
        deck.goto(url)
    deck.wait_for_reveal()
    deck.without_transitions()
    deck.settle()
    return deck


def wait_for_pill(deck: DeckPage, state: str) -> dict:
    deck.page.wait_for_function(PILL_STATE, arg=[state], timeout=15_000)
    return deck.follow_pill


def press_pill(deck: DeckPage) -> None:
    deck.page.click(".follow-pill")


def test_students_follow_the_lecturer_until_they_move_on_their_own(new_deck, classroom):
    url, key, channel = classroom
    lecturer = open_deck(new_deck, f"{url}?autorun=0&{FOLLOW['keyParam']}={key}")
    assert wait_for_pill(lecturer, "live")["button"] is False
    assert key not in lecturer.page.url   # out of the address (and of any link copied from it)
    first, second = open_deck(new_deck, url + "?autorun=0"), open_deck(new_deck, url + "?autorun=0")
    lecturer.go_to_slide(1)
    for student in (first, second):
        pill = wait_for_pill(student, "off")
        assert pill == {"state": "off", "text": "Seguir al profesor", "button": True}
        assert student.slide_index == 0
        press_pill(student)
        wait_for_pill(student, "following")
        student.wait_for_slide(1)   # the lecturer's latest slide, at once

    lecturer.go_to_slide(3)
    for student in (first, second):
        student.wait_for_slide(3)
    lecturer.page.wait_for_function(PILL_TEXT, arg=["2 estudiantes te siguen"], timeout=15_000)
    assert channel.followers == 2

    # The first student moves on their own: they stop following at once.
    first.blur()
    first.press("ArrowRight")
    first.wait_for_slide(4)
    assert wait_for_pill(first, "detached")["text"].startswith("Volver con el profesor")
    lecturer.go_to_slide(2)
    second.wait_for_slide(2)
    first.page.wait_for_function(PILL_TEXT, arg=["Volver con el profesor (diapositiva"])
    assert first.slide_index == 4

    # «Volver con el profesor»: back to the lecturer's slide, following again.
    press_pill(first)
    first.wait_for_slide(2)
    assert wait_for_pill(first, "following")["text"] == "Siguiendo al profesor"
    lecturer.go_to_slide(5)
    for student in (first, second):
        student.wait_for_slide(5)

    # Pressing «Siguiendo al profesor» stops: the lecturer moves on alone.
    press_pill(second)
    assert wait_for_pill(second, "off")["text"] == "Seguir al profesor"
    lecturer.go_to_slide(0)
    first.wait_for_slide(0)
    lecturer.page.wait_for_function(PILL_TEXT, arg=["1 estudiante te sigue"], timeout=15_000)
    assert second.slide_index == 5
    for deck in (lecturer, first, second):
        assert not [error for error in deck.console_errors if FOLLOW_SEGMENT in error], deck.console_errors


def test_a_wrong_key_moves_no_one(new_deck, classroom):
    url, _, channel = classroom
    student = open_deck(new_deck, url + "?autorun=0")
    wait_for_pill(student, "off")
    press_pill(student)
    wait_for_pill(student, "following")
    where = student.slide_index
    published = channel.published
    impostor = open_deck(new_deck, f"{url}?autorun=0&{FOLLOW['keyParam']}=no-es-la-clave")
    assert wait_for_pill(impostor, "refused")["text"].startswith("La clave del profesor no es válida")
    impostor.go_to_slide(where + 2)
    impostor.settle()
    assert channel.published == published
    assert student.follow_pill["state"] == "following" and student.slide_index == where


@pytest.mark.parametrize("server", ["estatico", "sin-canal"])
def test_without_the_channel_there_is_no_button_and_no_request(new_deck, server, cells_plain_url, cells_url):
    base = cells_plain_url if server == "estatico" else cells_url
    for address in (base + "?autorun=0", f"{base}?autorun=0&{FOLLOW['keyParam']}=clave"):
        deck = open_deck(new_deck, address)
        deck.go_to_slide(2)
        assert deck.follow_pill is None
        assert deck.page.evaluate("() => Reveal.getPlugin('dpdeck-follow').role") is None
        assert not [request for request in deck.requests if FOLLOW_SEGMENT in request]


# A cell that tries the channel by every way the worker has, as the deck's own
# folder would name it (relative, absolute, in capitals, percent-encoded).
CELL_TRIES_THE_CHANNEL = """import js
from pyodide.http import open_url
targets = ['dpdeck-follow/events', '/dpdeck-follow/publish?h=2&v=0&f=-1', './DPDECK-FOLLOW/events',
           'dpdeck%2Dfollow/events', js.location.origin + '/dpdeck-follow/publish?h=2&v=0&f=-1']
ways = {'fetch': lambda url: js.fetch(url), 'xhr': lambda url: js.XMLHttpRequest.new().open('GET', url),
        'open_url': open_url, 'EventSource': lambda url: js.EventSource.new(url)}
refused = []
for name, way in ways.items():
    for url in targets:
        try:
            way(url)
        except Exception as error:
            refused.append('no se envió nada' in str(error))
print(len(refused), all(refused))
"""


def test_a_cell_can_neither_listen_nor_publish(new_deck, classroom):
    url, _, channel = classroom
    deck = new_deck()
    deck.goto(url + "?autorun=0")
    deck.wait_until_ready()
    listening, published = channel.followers, channel.published
    cell = deck.cell("pruebas")
    cell.show()
    cell.set_source(CELL_TRIES_THE_CHANNEL)
    assert cell.run() == "done", cell.output_text()
    assert cell.output_text().strip() == "20 True"
    deck.settle()
    assert (channel.followers, channel.published) == (listening, published)
    assert not [request for request in deck.requests if FOLLOW_SEGMENT in request.lower()], deck.requests
