"""The deck's development server (deckbuild.server): isolation headers, wasm MIME type, revalidation with ETag."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request

import pytest

from deckbuild.server import make_server


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
