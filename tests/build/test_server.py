"""The deck's server (deckbuild.server): isolation headers, wasm MIME type, revalidation with ETag,
odd requests answered with a status and one log line, nothing from outside the folder, a classroom's addresses."""

from __future__ import annotations

import concurrent.futures
import gzip
import hashlib
import html
import json
import os
import re
import socket
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from deckbuild import serve as serve_module
from deckbuild import server as server_module
from deckbuild.policy import compose_policy, find_inline_scripts, hash_script
from deckbuild.server import Connection, Limits, find_room, make_server


@pytest.fixture
def served(tmp_path):
    (tmp_path / "index.html").write_text("<p>hola</p>")
    (tmp_path / "a.wasm").write_bytes(b"\0asm\1\0\0\0")
    (tmp_path / "manifest.json").write_text(json.dumps({"files": {"index.html": "ab" * 32}}))
    servers = {}

    def start(isolated):
        server = make_server(tmp_path, 0, isolated=isolated)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers[isolated] = server
        return f"http://127.0.0.1:{server.server_address[1]}/"

    start.root = tmp_path
    yield start
    for server in servers.values():
        server.shutdown()
        server.server_close()


def fetch(url, headers=None):
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {})) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, b""


def test_isolation_headers_and_wasm_type(served):
    base = served(True)
    status, headers, body = fetch(base)
    assert status == 200 and body == b"<p>hola</p>"
    assert headers["Cross-Origin-Opener-Policy"] == "same-origin"
    assert headers["Cross-Origin-Embedder-Policy"] == "require-corp"
    assert headers["Cross-Origin-Resource-Policy"] == "same-origin"
    assert headers["Cache-Control"] == "no-cache"
    status, headers, _ = fetch(base + "a.wasm")
    assert headers["Content-Type"] == "application/wasm"


def test_without_isolation_no_cross_origin_headers(served):
    _, headers, _ = fetch(served(False) + "index.html")
    assert headers["Cross-Origin-Embedder-Policy"] is None and headers["Cross-Origin-Opener-Policy"] is None


def test_etag_comes_from_the_manifest_and_revalidates(served):
    base = served(True)
    _, headers, _ = fetch(base + "index.html")
    assert headers["ETag"] == '"' + "ab" * 16 + '"'
    status, _, body = fetch(base + "index.html", {"If-None-Match": headers["ETag"]})
    assert (status, body) == (304, b"")
    status, _, _ = fetch(base + "index.html", {"If-None-Match": '"otro"'})
    assert status == 200
    _, wasm_headers, _ = fetch(base + "a.wasm")
    assert wasm_headers["ETag"].startswith('W/"')
    assert fetch(base + "a.wasm", {"If-None-Match": wasm_headers["ETag"]})[0] == 304


@pytest.mark.parametrize("accept, chosen", [
    ("gzip, deflate, br, zstd", "br"), ("gzip", "gzip"), ("br;q=0, gzip;q=0.5", "gzip"), ("", None),
    ("identity", None), ("*", "br"), ("*;q=0, gzip", "gzip"), ("BR", "br"), ("br;q=bad, gzip", "gzip"),
])
def test_the_coding_is_the_first_the_browser_accepts(accept, chosen):
    assert server_module.choose_encoding(accept, {"br": 1, "gzip": 1}) == chosen
    assert server_module.choose_encoding(accept, {}) is None


@pytest.fixture
def compressed_folder(tmp_path):
    """A built-like folder: a page with brotli and gzip copies listed in its manifest, and a wasm without."""
    page = b"<p>hola</p>" * 200
    (tmp_path / "index.html").write_bytes(page)
    gzipped, brotli = gzip.compress(page), b"brotli-de-mentira"   # the server sends a copy as it is
    (tmp_path / "index.html.gz").write_bytes(gzipped)
    (tmp_path / "index.html.br").write_bytes(brotli)
    (tmp_path / "a.wasm").write_bytes(b"\0asm\1\0\0\0")
    manifest = {"files": {"index.html": "ab" * 32, "a.wasm": "cd" * 32},
                "encoded": {"index.html": {"br": hashlib.sha256(brotli).hexdigest(),
                                           "gzip": hashlib.sha256(gzipped).hexdigest()}}}
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    return tmp_path, page


def test_a_compressed_copy_goes_to_a_browser_that_accepts_it(compressed_folder):
    folder, page = compressed_folder
    server = make_server(folder, 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    try:
        answers = {accept: fetch(base + "index.html", {"Accept-Encoding": accept}) for accept in ("br, gzip", "gzip", "")}
        etags = set()
        for accept, coding, body in (("br, gzip", "br", b"brotli-de-mentira"), ("gzip", "gzip", None), ("", None, page)):
            status, headers, received = answers[accept]
            assert status == 200 and headers["Content-Encoding"] == coding and headers["Vary"] == "Accept-Encoding"
            assert headers["Content-Type"] == "text/html" and int(headers["Content-Length"]) == len(received)
            assert headers["Cross-Origin-Embedder-Policy"] == "require-corp" and headers["Content-Security-Policy"]
            assert (gzip.decompress(received) if coding == "gzip" else received) == (body or page)
            etags.add(headers["ETag"])
        assert etags == {'"' + "ab" * 16 + '-br"', '"' + "ab" * 16 + '-gzip"', '"' + "ab" * 16 + '"'}
        # Revalidation is per coding: the brotli ETag is current for a brotli request, not for a plain one.
        status, headers, body = fetch(base + "index.html", {"Accept-Encoding": "br", "If-None-Match": '"' + "ab" * 16 + '-br"'})
        assert (status, body, headers["Vary"], headers["ETag"]) == (304, b"", "Accept-Encoding", '"' + "ab" * 16 + '-br"')
        assert fetch(base + "index.html", {"If-None-Match": '"' + "ab" * 16 + '-br"'})[0] == 200
        # A file without copies is sent as it is, with no Vary.
        _, headers, _ = fetch(base + "a.wasm", {"Accept-Encoding": "br, gzip"})
        assert headers["Content-Encoding"] is None and headers["Vary"] is None
        # A copy the manifest lists but the folder lacks is not offered.
        (folder / "index.html.br").unlink()
        _, headers, _ = fetch(base + "index.html", {"Accept-Encoding": "br, gzip"})
        assert headers["Content-Encoding"] == "gzip"
    finally:
        server.shutdown()
        server.server_close()


def test_a_damaged_copy_is_never_sent(compressed_folder, capsys):
    """A copy cut short (or changed) after the build: the file goes as it is, and the console says so once."""
    folder, page = compressed_folder
    good = gzip.compress(page)
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["encoded"]["index.html"] = {"gzip": hashlib.sha256(good).hexdigest()}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    (folder / "index.html.gz").write_bytes(good[: len(good) // 2])
    server = make_server(folder, 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    try:
        for _ in range(2):
            status, headers, body = fetch(base + "index.html", {"Accept-Encoding": "gzip"})
            assert (status, headers["Content-Encoding"], body) == (200, None, page)
        (folder / "index.html.gz").write_bytes(good)   # mended: sent again
        status, headers, body = fetch(base + "index.html", {"Accept-Encoding": "gzip"})
        assert headers["Content-Encoding"] == "gzip" and gzip.decompress(body) == page
    finally:
        server.shutdown()
        server.server_close()
    lines = [line for line in capsys.readouterr().err.splitlines() if "dañada" in line]
    assert lines == ["copia comprimida dañada, se envía el archivo sin comprimir: index.html.gz"]


def test_head_gives_the_same_head_and_no_body(compressed_folder):
    folder, _ = compressed_folder
    server = make_server(folder, 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        request = (b"HEAD /index.html HTTP/1.1\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n")
        answer = send_raw(server.server_address[1], request)
        head, _, body = answer.partition(b"\r\n\r\n")
        assert status_of(answer) == 200 and body == b""
        assert b"Content-Encoding: gzip" in head and b"Vary: Accept-Encoding" in head
    finally:
        server.shutdown()
        server.server_close()


# ------------------------------------------------------------ odd input: a status and one log line, no traceback


@pytest.fixture
def raw_server(tmp_path, capsys):
    """The server on a folder with a page, a sub-folder, and symlinks in and out; stderr captured."""
    root = tmp_path / "dist"
    (root / "sub").mkdir(parents=True)
    (root / "index.html").write_text(PAGE, encoding="utf-8")
    (root / "sub" / "a.txt").write_text("a")
    (root / "con-indice").mkdir()
    (root / "con-indice" / "index.html").write_text("dentro")
    (tmp_path / "secreto.txt").write_text("SECRETO")
    (root / "fuera").symlink_to(tmp_path / "secreto.txt")
    (root / "fuera-carpeta").symlink_to(tmp_path, target_is_directory=True)
    (root / "dentro").symlink_to(root / "sub" / "a.txt")
    server = make_server(root, 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1], capsys
    server.shutdown()
    server.server_close()


PAGE = ('<!doctype html><meta http-equiv="Content-Security-Policy" content="default-src \'self\'; '
        'script-src \'self\' \'wasm-unsafe-eval\'; object-src \'none\'"><p>hola</p>')


def send_raw(port: int, data: bytes) -> bytes:
    """Send bytes as they are; return the whole answer (the server closes after an error)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        connection.sendall(data)
        chunks = []
        while True:
            chunk = connection.recv(65536)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)


def status_of(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/1.") else 0


CLOSE = b"\r\nConnection: close\r\n\r\n"
ODD_REQUESTS = {
    "línea-mal-formada": (b"GARBAGE\r\n\r\n", 400),
    "línea-de-espacios": (b"     \r\n\r\n", 400),
    "versión-mal-formada": (b"GET / HTTX/9\r\n\r\n", 400),
    "url-de-70-kb": (b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\n\r\n", 414),
    "nul": (b"GET /%00 HTTP/1.1" + CLOSE, 400),
    "nul-en-medio": (b"GET /sub/%00a.txt HTTP/1.1" + CLOSE, 400),
    "basura-binaria": (bytes(range(256)) + b"\r\n\r\n", 400),
    "saludo-tls": (b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + bytes(range(200)) + b"\r\n\r\n", 400),
    "preámbulo-http2": (b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 505),
    "no-utf8": (b"GET /%ff%fe HTTP/1.1" + CLOSE, 400),
    "escape-de-terminal": (b"GET /a\x1b[31mrojo HTTP/1.1" + CLOSE, 400),
    "forma-absoluta": (b"GET http://otro/ HTTP/1.1" + CLOSE, 400),
    "post": (b"POST / HTTP/1.1\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc", 501),
    "demasiadas-cabeceras": (b"GET / HTTP/1.1\r\n" + b"".join(b"X-%d: 1\r\n" % i for i in range(200)) + b"\r\n", 431),
    "punto-punto": (b"GET /../secreto.txt HTTP/1.1" + CLOSE, 404),
    "punto-punto-codificado": (b"GET /%2e%2e/secreto.txt HTTP/1.1" + CLOSE, 404),
    "enlace-hacia-fuera": (b"GET /fuera HTTP/1.1" + CLOSE, 404),
    "carpeta-enlazada-fuera": (b"GET /fuera-carpeta/secreto.txt HTTP/1.1" + CLOSE, 404),
    "listado-de-carpeta": (b"GET /sub/ HTTP/1.1" + CLOSE, 404),
    "nombre-larguísimo": (b"GET /" + b"a" * 5000 + b" HTTP/1.1" + CLOSE, 404),
}


@pytest.mark.parametrize("name", sorted(ODD_REQUESTS))
def test_odd_requests_get_a_status_and_one_log_line(name, raw_server):
    port, log = raw_server
    request, status = ODD_REQUESTS[name]
    answer = send_raw(port, request)
    assert status_of(answer) == status, answer[:200]
    assert b"X-Content-Type-Options: nosniff" in answer
    assert b"SECRETO" not in answer and b"a.txt" not in answer   # no file from outside, no listing
    time.sleep(0.2)
    log = log.readouterr().err
    lines = log.splitlines()
    assert len(lines) == 1 and f" {status} " in lines[0], lines
    assert "Traceback" not in log and "\x1b" not in log


def test_symlinks_inside_the_folder_and_folders_with_an_index_are_served(raw_server):
    port, _ = raw_server
    assert send_raw(port, b"GET /dentro HTTP/1.1" + CLOSE).endswith(b"\r\n\r\na")
    moved = send_raw(port, b"GET /con-indice?x=1 HTTP/1.1" + CLOSE)
    assert status_of(moved) == 301 and b"Location: /con-indice/?x=1\r\n" in moved
    assert send_raw(port, b"GET /con-indice/ HTTP/1.1" + CLOSE).endswith(b"dentro")


def test_every_answer_carries_nosniff_and_pages_and_scripts_the_decks_policy(served):
    base = served(True)
    script = "document.documentElement.dataset.primero = '1';"
    (Path(served.root) / "index.html").write_text(f"<script>{script}</script><p>hola</p>")
    (Path(served.root) / "worker.js").write_text("self.onmessage = () => {};")
    policy = compose_policy(inline_scripts=[script], header=True)
    assert hash_script(script) in policy and "'unsafe-inline'" not in policy.split("script-src")[1].split(";")[0]
    for path, governed in (("", True), ("worker.js", True), ("no-existe", True), ("a.wasm", False)):
        _, headers, _ = fetch(base + path)
        assert headers["X-Content-Type-Options"] == "nosniff"
        assert headers["Content-Security-Policy"] == (policy if governed else None), path
    # A rebuilt page (another inline script) is seen at once.
    (Path(served.root) / "index.html").write_text("<script>1</script>")
    os.utime(Path(served.root) / "index.html", (1, 1))
    _, headers, _ = fetch(base)
    assert headers["Content-Security-Policy"] == compose_policy(inline_scripts=["1"], header=True)
    # No page at all: scripts still get the deck's policy.
    (Path(served.root) / "index.html").unlink()
    _, headers, _ = fetch(base + "worker.js")
    assert headers["Content-Security-Policy"] == compose_policy(header=True)


def test_the_policy_is_the_built_pages(dist_dir):
    """The deck's own page: the header says what its <meta> says, and both are the deck's policy."""
    server = make_server(dist_dir, 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        _, headers, body = fetch(f"http://127.0.0.1:{server.server_address[1]}/")
    finally:
        server.shutdown()
        server.server_close()
    meta = html.unescape(re.search(rb'http-equiv="Content-Security-Policy" content="([^"]+)"', body).group(1).decode())
    assert meta == compose_policy(inline_scripts=find_inline_scripts(body.decode()))
    # The header adds what a <meta> cannot carry: no page of another origin may frame the deck.
    assert "frame-ancestors" not in meta
    assert headers["Content-Security-Policy"] == f"{meta}; frame-ancestors 'self'"


def test_a_request_that_stops_half_way_is_answered_408_and_closed(tmp_path):
    (tmp_path / "index.html").write_text("hola")
    server = make_server(tmp_path, 0, limits=Limits(head_seconds=0.5))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with socket.create_connection(("127.0.0.1", server.server_address[1]), timeout=10) as connection:
            connection.sendall(b"GET / HT")   # and then nothing
            answer = b""
            while chunk := connection.recv(65536):
                answer += chunk
        assert status_of(answer) == 408 and b"X-Content-Type-Options: nosniff" in answer
    finally:
        server.shutdown()
        server.server_close()


def test_an_idle_connection_is_closed(tmp_path):
    (tmp_path / "index.html").write_text("hola")
    server = make_server(tmp_path, 0, limits=Limits(idle_seconds=0.5))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with socket.create_connection(("127.0.0.1", server.server_address[1]), timeout=10) as connection:
            assert connection.recv(100) == b""   # never a request: closed without a word
    finally:
        server.shutdown()
        server.server_close()


# ------------------------------------------------------------ serving a classroom


def test_the_lecturer_is_told_which_address_students_open(monkeypatch):
    monkeypatch.setattr(serve_module, "list_lan_addresses", lambda: ["192.168.1.23", "10.0.0.5"])
    lines = "\n".join(serve_module.describe_addresses("0.0.0.0", 8000))
    assert "http://localhost:8000/" in lines
    assert "los estudiantes, en la misma red, abren:" in lines
    assert "http://192.168.1.23:8000/" in lines and "http://10.0.0.5:8000/" in lines
    assert "«detener» reinicia Python" in lines
    local = "\n".join(serve_module.describe_addresses("127.0.0.1", 8000))
    assert "http://localhost:8000/" in local and "--host 0.0.0.0" in local and "estudiantes" not in local
    assert "http://[::1]:8000/" not in "\n".join(serve_module.describe_addresses("::1", 8000))


def test_lan_addresses_leave_out_loopback():
    addresses = serve_module.list_lan_addresses()
    assert all(not address.startswith("127.") for address in addresses)


def test_all_interfaces_are_served(tmp_path):
    (tmp_path / "index.html").write_text("hola")
    server = make_server(tmp_path, 0, host="0.0.0.0")
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        status, _, body = fetch(f"http://127.0.0.1:{server.server_address[1]}/")
    finally:
        server.shutdown()
        server.server_close()
    assert (status, body) == (200, b"hola")


# ------------------------------------------------------------ a classroom cannot take it down


def drain(connection: socket.socket) -> bytes:
    """What a socket holds until the server closes it (b"" if it was closed without a word)."""
    received = b""
    try:
        while chunk := connection.recv(65536):
            received += chunk
    except (ConnectionError, TimeoutError):
        pass
    return received


def test_slow_clients_cannot_lock_out_the_others(tmp_path):
    """Slowloris beyond the connection limit (150 > 128), and 100 parallel downloads: every download completes, whole.

    Bounded: at most ~150 sockets on loopback for a few seconds. The slow
    clients send one header byte every 0.2 s; each is answered 408 and closed
    once its headers take longer than the deadline, or closed earlier to make
    room for a client with a whole request.
    """
    payload = os.urandom(2 * 1024 * 1024)
    (tmp_path / "index.html").write_text("hola")
    (tmp_path / "grande.bin").write_bytes(payload)
    limits = Limits(head_seconds=1.0, max_connections=128)
    server = make_server(tmp_path, 0, limits=limits)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    slow = []
    stop = threading.Event()
    try:
        for _ in range(150):
            connection = socket.create_connection(("127.0.0.1", port), timeout=10)
            connection.sendall(b"GET / HTTP/1.1\r\nX-a: ")
            slow.append(connection)

        def trickle():
            while not stop.wait(0.2):
                for connection in slow:
                    try:
                        connection.send(b"a")
                    except OSError:
                        pass

        threading.Thread(target=trickle, daemon=True).start()

        def download(_):
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/grande.bin", timeout=60) as response:
                return response.status, response.read()

        with concurrent.futures.ThreadPoolExecutor(max_workers=100) as pool:
            results = list(pool.map(download, range(100)))
        assert [status for status, _ in results] == [200] * 100
        assert all(body == payload for _, body in results)
        stop.set()
        # Every slow client was cut off: answered 408 when its deadline passed, or closed to make room.
        answers = []
        for connection in slow:
            connection.settimeout(limits.head_seconds + 5)
            answers.append(drain(connection))
        assert all(answer == b"" or status_of(answer) == 408 for answer in answers)
        assert sum(status_of(answer) == 408 for answer in answers) > 0
        assert server.stats["200"] == 100
    finally:
        stop.set()
        for connection in slow:
            connection.close()
        server.shutdown()
        server.server_close()


def idle_connection(address: str, waiting_since: float, *, closing: bool = False) -> Connection:
    return Connection(writer=None, address=address, waiting_since=waiting_since, closing=closing)


def test_room_is_made_by_the_longest_waiting_and_those_being_closed_do_not_count():
    limits = Limits(max_connections=3)
    first, second, third = (idle_connection("10.0.0.1", since) for since in (1.0, 2.0, 3.0))
    answering = Connection(writer=None, address="10.0.0.1", waiting_since=None)
    assert find_room([first, second], "10.0.0.2", limits) == (True, None)
    assert find_room([second, first, third], "10.0.0.2", limits) == (True, first)
    # Every place taken by a connection being answered: the newcomer is turned away.
    assert find_room([answering] * 3, "10.0.0.2", limits) == (False, None)
    # Two already closed for room (their tasks not ended yet) leave room: the client just arrived is not closed.
    gone = [idle_connection("10.0.0.1", since, closing=True) for since in (0.1, 0.2)]
    assert find_room([*gone, answering, third], "10.0.0.2", limits) == (True, None)
    # Per address: only that address's connections count, and only they make room.
    per_address = Limits(max_per_address=2)
    other = idle_connection("10.0.0.9", 0.5)
    assert find_room([other, second, third], "10.0.0.1", per_address) == (True, second)
    assert find_room([other, second, idle_connection("10.0.0.1", 0.2, closing=True)], "10.0.0.1",
                     per_address) == (True, None)


def test_one_address_cannot_hold_every_connection(tmp_path):
    """On a network each address keeps at most max_per_address connections; the longest idle ones go first."""
    (tmp_path / "index.html").write_text("hola")
    server = make_server(tmp_path, 0, limits=Limits(max_per_address=8))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    idle = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(20)]
    try:
        assert fetch(f"http://127.0.0.1:{port}/")[0] == 200
        closed = 0
        for connection in idle:
            connection.settimeout(0.5)
            try:
                closed += connection.recv(1) == b""
            except TimeoutError:
                pass
            except ConnectionError:
                closed += 1
        assert closed >= 20 + 1 - 8
    finally:
        for connection in idle:
            connection.close()
        server.shutdown()
        server.server_close()


def test_serving_a_network_caps_each_address():
    lan = make_server(Path("."), 0, host="0.0.0.0")
    local = make_server(Path("."), 0)
    try:
        assert lan.limits.max_per_address == server_module.NETWORK_MAX_PER_ADDRESS
        assert local.limits.max_per_address is None
    finally:
        lan.server_close()
        local.server_close()
