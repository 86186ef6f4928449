"""The deck's development server: static files with cross-origin isolation and revalidation.

Stage: a built folder → http://127.0.0.1:PORT/. COOP/COEP make the page
cross-origin isolated (SharedArrayBuffer, so Stop interrupts Python at once);
ETags come from manifest.json, so a rebuild is seen at once and an unchanged
file answers 304.
"""

from __future__ import annotations

import http.server
import json
import os
import sys
from pathlib import Path

from .errors import BuildError
from .paths import display_path


class DeckRequestHandler(http.server.SimpleHTTPRequestHandler):
    """Static files with cross-origin isolation, wasm MIME type and revalidation caching."""

    isolated = True
    protocol_version = "HTTP/1.1"   # keep-alive: a reload revalidates ~100 files over few connections
    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".wasm": "application/wasm", ".js": "text/javascript", ".mjs": "text/javascript",
        ".json": "application/json", ".css": "text/css", ".html": "text/html",
        ".whl": "application/zip", ".zip": "application/zip", ".png": "image/png",
        ".svg": "image/svg+xml", ".woff2": "font/woff2", ".woff": "font/woff", ".ttf": "font/ttf",
        ".csv": "text/csv",
    }

    def end_headers(self):
        if self.isolated:
            # SharedArrayBuffer (and so interrupting Python) needs a cross-origin isolated page.
            self.send_header("Cross-Origin-Opener-Policy", "same-origin")
            self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
            self.send_header("Cross-Origin-Resource-Policy", "same-origin")
        # Always revalidate: unchanged files answer 304, a rebuild is seen at once.
        self.send_header("Cache-Control", "no-cache")
        etag = getattr(self, "_etag", None)
        if etag:
            self.send_header("ETag", etag)
        super().end_headers()

    def send_head(self):
        self._etag = None
        path = self.translate_path(self.path)
        if os.path.isdir(path):
            path = os.path.join(path, "index.html")
        if os.path.isfile(path):
            self._etag = self.server.etag_for(path)
            candidates = [tag.strip() for tag in self.headers.get("If-None-Match", "").split(",")]
            if self._etag in candidates:
                self.send_response(304)
                self.end_headers()
                return None
        return super().send_head()

    def log_request(self, code="-", size="-"):
        if str(code)[:1] in "45" and not self.path.endswith("/favicon.ico"):
            super().log_request(code, size)

    def log_error(self, format, *args):
        pass  # log_request reports failed requests, once


class DeckServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, root: Path, port: int, handler):
        self.root = Path(root)
        self._manifest: tuple[float, dict] = (-1.0, {})
        super().__init__(("127.0.0.1", port), handler)

    def etag_for(self, path: str) -> str:
        """Strong ETag from the manifest's SHA-256 (stable across rebuilds), else size+mtime."""
        manifest_path = self.root / "manifest.json"
        try:
            mtime = manifest_path.stat().st_mtime
            if mtime != self._manifest[0]:
                self._manifest = (mtime, json.loads(manifest_path.read_text(encoding="utf-8"))["files"])
            relative = Path(path).resolve().relative_to(self.root.resolve()).as_posix()
            digest = self._manifest[1].get(relative)
            if digest:
                return f'"{digest[:32]}"'
        except (OSError, ValueError, KeyError):
            pass
        stat = os.stat(path)
        return f'W/"{stat.st_size:x}-{stat.st_mtime_ns:x}"'

    def handle_error(self, request, client_address):
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)


def make_server(root: Path, port: int = 0, isolated: bool = True) -> DeckServer:
    """A server for root/ on 127.0.0.1:port (0 = a free port), with or without COOP/COEP."""
    root = Path(root).resolve()

    class Handler(DeckRequestHandler):
        pass

    Handler.isolated = isolated

    def factory(*args, **kwargs):
        return Handler(*args, directory=str(root), **kwargs)

    return DeckServer(root, port, factory)


def serve(out: Path, port: int) -> None:
    """Serve out/ until Ctrl+C."""
    try:
        server = make_server(out, port)
    except OSError as error:
        raise BuildError(f"no se puede abrir el puerto {port} ({error.strerror}); prueba con --port") from None
    print(f"\nSirviendo {display_path(out)} en http://localhost:{server.server_address[1]}/  "
          "(Ctrl+C para terminar)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("\nservidor detenido")
    finally:
        server.server_close()
