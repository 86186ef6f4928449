"""A page of another origin can neither frame the deck on its own server nor drive it anywhere.

`build.py serve` sends `frame-ancestors 'self'` with the page's policy (a
<meta> cannot carry it): a page on another origin that frames the deck gets
nothing. A plain static host sends no such header; there the deck still
turns away every message from another origin, so reveal.js's postMessage API
(which only the speaker view's own previews use) cannot move it or read it.
"""

from __future__ import annotations

import functools
import http.server
import json
import threading

import pytest

FOREIGN_PAGE = """<!doctype html><meta charset="utf-8"><title>ajena</title>
<iframe id="mazo" src="{url}" width="800" height="450"></iframe>
<script>
window.answers = [];
window.addEventListener('message', (event) => window.answers.push(String(event.data)));
</script>"""


class ForeignHandler(http.server.BaseHTTPRequestHandler):
    """Another origin's page: one iframe of the deck."""

    url = ""

    def do_GET(self):
        body = FOREIGN_PAGE.format(url=self.url).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args):
        pass


@pytest.fixture
def foreign_page():
    """Factory: the URL of a page on another origin (another port) that frames `url`."""
    servers = []

    def serve(url: str) -> str:
        handler = type("Framing", (ForeignHandler,), {"url": url})
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/"

    yield serve
    for server in servers:
        server.shutdown()
        server.server_close()


def deck_frame(page):
    return next((frame for frame in page.frames if frame is not page.main_frame), None)


def test_the_decks_server_lets_no_other_origin_frame_it(new_page, cells_url, foreign_page):
    page = new_page()
    refused = []
    page.on("console", lambda message: refused.append(message.text) if "frame-ancestors" in message.text else None)
    page.goto(foreign_page(cells_url + "?autorun=0"))
    page.wait_for_timeout(2000)
    assert refused, "el navegador no dijo que la política impidió enmarcar el mazo"
    # The page was never made: none of its scripts was asked for.
    assert not [url for url in page.requests if url.startswith(cells_url + "js/")], page.requests


def test_on_a_plain_host_a_framing_page_cannot_drive_or_read_the_deck(new_page, cells_plain_url, foreign_page):
    page = new_page()
    page.goto(foreign_page(cells_plain_url + "?autorun=0"))
    frame = deck_frame(page)
    frame.wait_for_function("() => window.Reveal && Reveal.isReady()")
    assert frame.evaluate("() => Reveal.getIndices().h") == 0
    for message in ({"method": "slide", "args": [3]}, {"method": "next"}, {"method": "getState"},
                    {"method": "getSlidesAttributes"}):
        page.evaluate("(message) => document.getElementById('mazo').contentWindow.postMessage(message, '*')",
                      json.dumps(message))
    page.wait_for_timeout(1000)
    assert frame.evaluate("() => Reveal.getIndices().h") == 0
    assert page.evaluate("() => window.answers") == []
    # The deck's own view of itself is unharmed: it still moves when asked from inside.
    frame.evaluate("() => Reveal.slide(2)")
    assert frame.evaluate("() => Reveal.getIndices().h") == 2
