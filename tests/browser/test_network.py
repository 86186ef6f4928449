"""No door to the network from a cell.

A logging server listens on another port of 127.0.0.1 (TCP for HTTP and
WebSocket, UDP for WebTransport's QUIC) and answers anything it gets with a
script that would announce itself. Every channel a cell can reach (JavaScript
through `js`, Pyodide's helpers, Python's sockets, nested workers…) is driven
against it from a live cell, and the server must receive nothing at all, not
even a connection. Each cell's message must also tell the truth.

The guarantee is the page's Content-Security-Policy (deckbuild.policy), which
the Python worker inherits because it starts from a blob: URL; the worker's
own guards only add the Spanish explanation.
"""

from __future__ import annotations

import html
import socket
import socketserver
import threading
import time
from urllib.parse import urlsplit

import pytest

from deckbuild.policy import compose_policy, policy_for_page
from deckpage import DeckPage

# The deck's service worker runs here (elsewhere it is blocked): it is one way a cell might try out.
pytestmark = pytest.mark.service_worker

# The start of a cell that makes a worker of its own (a blob: URL) trying the usual ways out.
NESTED_WORKER_BLOB = (
    "import js\nfrom pyodide.ffi import to_js\n"
    "code = (\"fetch('{url}?fetch').catch(() => 0);\"\n"
    "        \"try {{ importScripts('{url}?importScripts') }} catch (e) {{}}\"\n"
    "        \"import('{url}?import').catch(() => 0);\"\n"
    "        \"try {{ new WebSocket('{ws}') }} catch (e) {{}}\"\n"
    "        \"try {{ new EventSource('{url}?eventsource') }} catch (e) {{}}\")\n"
    "blob = js.Blob.new(to_js([code]), to_js({{'type': 'text/javascript'}}, dict_converter=js.Object.fromEntries))\n"
)

# A channel, and the cell that tries it. {url}: http://127.0.0.1:PORT/<channel>,
# {ws}: ws://…/<channel>, {https}: https://…/<channel>, {port}: the port.
CHANNELS = {
    "fetch": "import js\njs.fetch('{url}')",
    "fetch-request": "import js\njs.fetch(js.Request.new('{url}'))",
    "fetch-no-cors": (
        "import js\nfrom pyodide.ffi import to_js\n"
        "js.fetch('{url}', to_js({{'mode': 'no-cors'}}, dict_converter=js.Object.fromEntries))"),
    "fetch-later": "import js\njs.Promise.resolve(0).then(lambda _: js.fetch('{url}'))",
    "xhr": "import js\nxhr = js.XMLHttpRequest.new()\nxhr.open('GET', '{url}')\nxhr.send()",
    "pyfetch": "from pyodide.http import pyfetch\npyfetch('{url}').send(None)",
    "pyfetch-task": (
        "import asyncio, js\nfrom pyodide.http import pyfetch\n"
        "js.Promise.resolve(0).then(lambda _: asyncio.ensure_future(pyfetch('{url}')))"),
    "open-url": "from pyodide.http import open_url\nopen_url('{url}')",
    "import-scripts": "import js\njs.importScripts('{url}')",
    "websocket": "import js\njs.WebSocket.new('{ws}')",
    "websocket-stream": "import js\njs.WebSocketStream.new('{ws}')",
    "webtransport": "import js\njs.WebTransport.new('{https}')",
    "event-source": "import js\njs.EventSource.new('{url}')",
    "cache-add": "import js\njs.caches.open('prueba').then(lambda cache: cache.add('{url}'))",
    "cache-add-all": (
        "import js\nfrom pyodide.ffi import to_js\n"
        "js.caches.open('prueba').then(lambda cache: cache.addAll(to_js(['{url}'])))"),
    "font-face": "import js\njs.FontFace.new('letra', 'url({url})').load()",
    "worker": "import js\njs.Worker.new('{url}')",
    "worker-module": (
        "import js\nfrom pyodide.ffi import to_js\n"
        "js.Worker.new('{url}', to_js({{'type': 'module'}}, dict_converter=js.Object.fromEntries))"),
    "nested-worker": (
        NESTED_WORKER_BLOB + "js.Worker.new(js.URL.createObjectURL(blob))"),
    "shared-worker": "import js\njs.SharedWorker.new('{url}')",
    "dynamic-import": "import js\njs.eval(\"import('{url}')\")",
    "function-constructor": "import js\njs.Function.new(\"return fetch('{url}')\")()",
    "run-js": "from pyodide.code import run_js\nrun_js(\"fetch('{url}')\")",
    "send-beacon": "import js\njs.navigator.sendBeacon('{url}', 'x')",
    "service-worker": "import js\njs.navigator.serviceWorker.register('{url}')",
    "create-image-bitmap": "import js\njs.createImageBitmap('{url}')",
    "load-package": "import pyodide_js\npyodide_js.loadPackage('{url}/paquete-1.0-py3-none-any.whl')",
    "micropip": (
        "import asyncio, js, micropip\n"
        "js.Promise.resolve(0).then(lambda _: asyncio.ensure_future(\n"
        "    micropip.install('{url}/paquete-1.0-py3-none-any.whl')))"),
    # Past the guards, straight to the browser's own functions: only the policy stands in the way.
    "fetch-native": "import js\njs.WorkerGlobalScope.prototype.fetch.call(js.self, '{url}')",
    "import-scripts-native": "import js\njs.WorkerGlobalScope.prototype.importScripts.call(js.self, '{url}')",
    "websocket-native": "import js\njs.WebSocket.prototype.constructor.new('{ws}')",
    "event-source-native": "import js\njs.EventSource.prototype.constructor.new('{url}')",
    "worker-native": (
        NESTED_WORKER_BLOB + "js.Worker.prototype.constructor.new(js.URL.createObjectURL(blob))"),
    "timer-fetch": "import js\njs.setTimeout(lambda: js.fetch('{url}'), 20)",
    "urllib": "import urllib.request\nurllib.request.urlopen('{url}', timeout=3)",
    "http-client": (
        "import http.client\nconnection = http.client.HTTPConnection('127.0.0.1', {port}, timeout=3)\n"
        "connection.request('GET', '/http-client')"),
    "socket": "import socket\nsock = socket.socket()\nsock.settimeout(3)\nsock.connect(('127.0.0.1', {port}))",
    "socket-create-connection": "import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=3)",
    "socket-udp": "import socket\nsock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\nsock.sendto(b'x', ('127.0.0.1', {port}))",
}
# What is left of Python's own networking: the cell says that nothing left the browser.
PYTHON_SOCKETS = ("urllib", "http-client", "socket", "socket-create-connection")
# Reconnecting channels (EventSource) get this long to try again before the verdict.
SETTLE_S = 3.0


class LoggingServer:
    """Records every TCP connection (and what it asked) and every UDP datagram on one port."""

    # What a successful request would get: a script that announces itself if it ever runs.
    ANSWER = (b"HTTP/1.1 200 OK\r\nContent-Type: text/javascript\r\nAccess-Control-Allow-Origin: *\r\n"
              b"Cross-Origin-Resource-Policy: cross-origin\r\nContent-Length: 39\r\nConnection: close\r\n\r\n"
              b"self.postMessage('guion ajeno ejecutado')")

    def __init__(self):
        self.hits: list[str] = []
        self.lock = threading.Lock()
        server = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self):
                self.request.settimeout(2)
                try:
                    first = self.request.recv(4096).split(b"\r\n", 1)[0].decode("latin-1")
                except OSError:
                    first = ""
                server.record(f"tcp {first or '(conexión sin datos)'}")
                try:
                    self.request.sendall(LoggingServer.ANSWER)
                except OSError:
                    pass

        self.tcp = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.tcp.daemon_threads = True
        self.port = self.tcp.server_address[1]
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", self.port))
        self.udp.settimeout(0.2)
        self.running = True
        threading.Thread(target=self.tcp.serve_forever, daemon=True).start()
        threading.Thread(target=self.listen_udp, daemon=True).start()

    def record(self, what: str) -> None:
        with self.lock:
            self.hits.append(what)

    def listen_udp(self) -> None:
        while self.running:
            try:
                data, _ = self.udp.recvfrom(65536)
            except OSError:
                continue
            self.record(f"udp {len(data)} bytes")

    def snapshot(self) -> list[str]:
        with self.lock:
            return list(self.hits)

    def close(self) -> None:
        self.running = False
        self.tcp.shutdown()
        self.tcp.server_close()
        self.udp.close()


@pytest.fixture(scope="module")
def logging_server():
    server = LoggingServer()
    yield server
    server.close()


def source_for(channel: str, port: int) -> str:
    base = f"127.0.0.1:{port}/{channel}"
    return CHANNELS[channel].format(url=f"http://{base}", ws=f"ws://{base}", https=f"https://{base}", port=port)


def try_channels(deck: DeckPage, server: LoggingServer, channels) -> dict[str, dict]:
    """Run each channel's cell; return {channel: {status, text, hits}} (hits: what the server saw meanwhile)."""
    cell = deck.cell("pruebas")
    cell.show()
    results = {}
    for channel in channels:
        before = len(server.snapshot())
        cell.set_source(source_for(channel, server.port))
        status = cell.run()
        time.sleep(0.3)  # an attempt that starts after the cell ends
        results[channel] = {"status": status, "text": cell.output_text().strip(),
                            "hits": server.snapshot()[before:]}
    return results


def report(results: dict[str, dict]) -> None:
    print()
    for channel, result in results.items():
        lines = result["text"].splitlines() or [""]
        shown = lines[0] if lines[0] == lines[-1] else f"{lines[0]} … {lines[-1]}"
        print(f"{channel:26} {result['status']:6} servidor: {len(result['hits'])} | {shown[:240]}")


def off_origin(requests: list[str], deck_url: str) -> list[str]:
    origin = urlsplit(deck_url)[:2]
    return [url for url in requests if not url.startswith(("data:", "blob:")) and urlsplit(url)[:2] != origin]


def test_no_channel_reaches_another_server(open_page, cells_url, logging_server):
    context, page = open_page(cells_url + "?autorun=0")
    try:
        deck = DeckPage(page)
        deck.wait_until_ready()
        # What the browser let through: a request past the guards that the policy
        # blocked is still seen starting (and failing), never finishing.
        finished, failed = [], []
        context.on("requestfinished", lambda request: finished.append(request.url))
        context.on("requestfailed", lambda request: failed.append((request.url, request.failure)))
        results = try_channels(deck, logging_server, CHANNELS)
        time.sleep(SETTLE_S)
        report(results)
        assert logging_server.snapshot() == [], "una celda llegó a otro servidor"
        assert off_origin(finished, cells_url) == []
        blocked = [(url, failure) for url, failure in failed if off_origin([url], cells_url)]
        assert all(failure == "csp" for _, failure in blocked), blocked
        # Only channels past the guards ever get as far as a request.
        assert {urlsplit(url).path.strip("/") for url, _ in blocked} <= {*NATIVE_CHANNELS, "worker-native"}, blocked
        # The deck is unharmed: Python is the same one, and cells still run.
        assert deck.python_state == "ready"
        assert deck.stats["restarts"] == 0
        assert all(result["status"] in ("done", "error") for result in results.values()), results
        assert "guion ajeno" not in " ".join(result["text"] for result in results.values())
        other = deck.cell("otra")
        assert other.run() == "done" and other.output_text().strip().endswith("10")
    finally:
        context.close()


def test_the_worker_runs_under_the_pages_policy(live_deck, cells_dist):
    assert live_deck.python["inheritsPolicy"] is True
    meta = live_deck.page.evaluate("() => document.querySelector('meta[http-equiv=Content-Security-Policy]').content")
    page = (cells_dist / "index.html").read_text(encoding="utf-8")
    assert meta == policy_for_page(page)
    # The page's one inline script (its first paint, which starts this worker) is allowed by hash alone.
    assert meta != compose_policy() and "'unsafe-inline'" not in meta.split("script-src")[1].split(";")[0]


def test_a_policy_that_blocks_the_decks_own_files_falls_back_to_a_plain_worker(new_deck, cells_url):
    """A browser that applied the policy differently in the worker must not leave the class without Python."""
    deck = new_deck()

    def with_strict_policy(route):
        response = route.fetch()
        page = response.text()
        policy = html.escape(policy_for_page(page))
        assert policy in page
        strict = policy.replace("connect-src &#x27;self&#x27;", "connect-src &#x27;none&#x27;")
        assert strict != policy
        route.fulfill(response=response, body=page.replace(policy, strict))

    deck.page.route(cells_url + "?autorun=0", with_strict_policy)
    deck.goto(cells_url + "?autorun=0")
    deck.wait_until_ready()
    assert deck.python["inheritsPolicy"] is False
    assert deck.stats["boots"] == 2
    assert any("aplica la política de seguridad de la página de otra forma" in text for text in deck.warnings)
    assert deck.cell("otra").run() == "done"


def test_refusals_say_what_happened(live_deck, logging_server):
    """A refused request says that nothing was sent; Python's sockets say nothing left the browser."""
    results = try_channels(live_deck, logging_server, ["fetch", "open-url", "import-scripts", "websocket",
                                                       "event-source", "worker", *PYTHON_SOCKETS])
    report(results)
    for channel in ("fetch", "open-url", "import-scripts", "websocket", "event-source", "worker"):
        text = results[channel]["text"]
        assert results[channel]["status"] == "error", (channel, text)
        assert "no se envió nada" in text, (channel, text)
        assert f"127.0.0.1:{logging_server.port}" in text, (channel, text)
    for channel in PYTHON_SOCKETS:
        text = results[channel]["text"]
        assert results[channel]["status"] == "error", (channel, text)
        assert text.startswith("Sin conexión en la línea"), (channel, text)
        assert "no salió nada del navegador" in text, (channel, text)
    assert logging_server.snapshot() == []


def test_a_refusal_whose_error_the_browser_lost_still_says_what_happened(live_deck, logging_server):
    """The refusal that stopped a cell replaces a lost error's SystemError; a cell with no refusal keeps its own."""
    # What Chromium now and then hands Python for a guard's error (worker.js, restoreLostRefusal).
    lost = "raise SystemError('error return without exception set')"
    cell = live_deck.cell("pruebas")
    cell.show()
    cell.set_source(f"import js\ntry:\n    js.WebSocket.new('ws://127.0.0.1:{logging_server.port}/perdido')\n"
                    f"except Exception:\n    pass\n{lost}")
    assert cell.run() == "error"
    restored = cell.output_text()
    assert "no se envió nada" in restored and f"ws://127.0.0.1:{logging_server.port}/perdido" in restored, restored
    assert "SystemError: error return" not in restored, restored
    cell.set_source(lost)
    assert cell.run() == "error"
    assert "SystemError: error return without exception set" in cell.output_text()
    assert logging_server.snapshot() == []


NATIVE_CHANNELS = ("fetch-native", "import-scripts-native", "websocket-native", "event-source-native")


def test_past_the_guards_the_policy_blocks_and_the_cell_is_told(live_deck, logging_server):
    """A cell that reaches the browser's own functions (past netguard.js) meets the policy, and is told so."""
    results = try_channels(live_deck, logging_server, [*NATIVE_CHANNELS, "worker-native"])
    time.sleep(SETTLE_S)
    report(results)
    assert logging_server.snapshot() == []
    for channel in NATIVE_CHANNELS:
        text = results[channel]["text"]
        assert ("La política de seguridad de la página bloqueó la conexión con otro servidor "
                f"(http://127.0.0.1:{logging_server.port}/" in text.replace("ws://", "http://")), (channel, text)
        assert "no salió nada del navegador" in text, (channel, text)
        assert "Bloqueado" not in text, (channel, text)


def test_a_block_left_by_an_earlier_cell_is_not_told_in_the_next_ones_notice(live_deck, logging_server):
    """A promise a cell leaves that reaches for another server (past the guards: the policy blocks it) long after
    the cell's notice was written: the next cell's notice says nothing of it (it goes to the console)."""
    cell = live_deck.cell("pruebas")
    cell.show()
    # The snapshot (16 MB) takes a while to read: the blocked request comes well after the cell's notice.
    cell.set_source("import js\n(js.fetch('pyodide/python-snapshot.bin').then(lambda r: r.arrayBuffer())\n"
                    "    .then(lambda _: js.WorkerGlobalScope.prototype.fetch.call(\n"
                    f"        js.self, 'http://127.0.0.1:{logging_server.port}/tarde')))\n"
                    "print('primera')")
    assert cell.run() == "done"
    assert "tarde" not in cell.output_text()
    live_deck.page.wait_for_timeout(2000)
    other = live_deck.cell("otra")
    assert other.run() == "done"
    assert "bloqueó" not in other.output_text() and "tarde" not in other.output_text(), other.output_text()
    assert logging_server.snapshot() == []


@pytest.mark.parametrize("server", ["cells_plain_url"])
def test_a_plain_server_under_a_sub_path_keeps_the_policy(server, request, open_page, logging_server):
    """No COOP/COEP, no policy header, the deck in a sub-folder of a plain http.server: the worker
    still runs under the page's <meta> policy, and the server hears nothing."""
    url = request.getfixturevalue(server)
    context, page = open_page(url + "?autorun=0")
    try:
        deck = DeckPage(page)
        deck.wait_until_ready()
        assert deck.isolated is False
        assert deck.python["inheritsPolicy"] is True
        # A fresh Python: the first JavaScript error of its life (a `new` among them) says what happened.
        # Past the guards, only the page's policy, inherited by the worker, keeps the server silent here.
        results = try_channels(deck, logging_server, ["websocket", "fetch", "import-scripts", "nested-worker",
                                                      "socket", *NATIVE_CHANNELS, "worker-native"])
        time.sleep(SETTLE_S)
        report(results)
        assert logging_server.snapshot() == []
        for channel in ("websocket", "fetch", "import-scripts", "nested-worker"):
            text = results[channel]["text"]
            assert results[channel]["status"] == "error", (channel, text)
            assert "no se envió nada" in text and "SystemError" not in text, (channel, text)
            assert "worker.js" not in text, (channel, text)
        assert "no salió nada del navegador" in results["socket"]["text"]
        for channel in NATIVE_CHANNELS:
            assert "La política de seguridad de la página bloqueó" in results[channel]["text"], channel
        assert deck.cell("otra").run() == "done"
    finally:
        context.close()
