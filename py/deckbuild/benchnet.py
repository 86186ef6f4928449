"""The network a benchmark visit goes through: one shared link, what was sent and when, and a generic host.

* `Link`: a link of so many Mbit/s on loopback that every response of every
  server in the benchmark shares, in order of arrival (a token bucket), as a
  classroom's Wi-Fi or a home connection is shared by everything a page loads.
* `Traffic`: the requests answered and the bytes sent since the last reset,
  with the moment each byte left, so a visit's bytes can be cut at the moment
  its page said «Python listo».
* `make_generic_host`: a static host like most: it compresses text, scripts
  and WebAssembly with gzip as it sends them (nginx's `gzip on` with those
  types, level 6, as GitHub Pages and common hosts do), keeps no precompressed
  copies, sends no cross-origin isolation and no Cache-Control. The deck and
  the plain page are measured through it as through `build.py serve`.

Measurement only: nothing here is shipped, nothing here asserts a time.
"""

from __future__ import annotations

import bisect
import email.utils
import gzip
import http.server
import json
import os
import sys
import threading
import time
import urllib.parse
from http import HTTPStatus
from pathlib import Path

# The link's queue: this many bytes may leave at once before the rate applies
# (a router's buffer); small enough that the rate holds within a tenth of a second.
LINK_BURST_BYTES = 64 * 1024
# Each write goes out in pieces this big, each waiting its turn on the link,
# so concurrent responses interleave as they would on a real link.
LINK_CHUNK_BYTES = 16 * 1024
GENERIC_GZIP_LEVEL = 6
# What the generic host compresses (nginx's gzip_types as common setups list them).
GENERIC_GZIP_TYPES = ("text/", "application/javascript", "application/json", "application/wasm", "image/svg+xml")
GENERIC_TYPES = {
    ".html": "text/html", ".js": "application/javascript", ".mjs": "application/javascript",
    ".css": "text/css", ".json": "application/json", ".wasm": "application/wasm", ".svg": "image/svg+xml",
    ".png": "image/png", ".woff2": "font/woff2", ".woff": "font/woff", ".ttf": "font/ttf", ".csv": "text/csv",
    ".txt": "text/plain", ".ipynb": "application/json", ".zip": "application/zip",
}


class Link:
    """`mbit` Mbit/s shared by everything sent through it; None: no limit (loopback as it is)."""

    # The deck's server sends through a link in pieces this big (deckbuild.server).
    piece_bytes = LINK_CHUNK_BYTES

    def __init__(self, mbit: float | None):
        self.mbit = mbit
        self.bytes_per_second = mbit * 1e6 / 8 if mbit else None
        self.lock = threading.Lock()
        self.free_at = 0.0   # when the link has sent everything reserved so far (time.monotonic)

    def reserve(self, count: int) -> float:
        """Take `count` bytes' turn on the link; return how long to wait before sending them (s)."""
        if not self.bytes_per_second:
            return 0.0
        with self.lock:
            now = time.monotonic()
            self.free_at = max(self.free_at, now) + count / self.bytes_per_second
            return max(0.0, self.free_at - now - LINK_BURST_BYTES / self.bytes_per_second)

    def wait(self, count: int) -> None:
        delay = self.reserve(count)
        if delay:
            time.sleep(delay)

    def describe(self) -> str:
        return f"{self.mbit:g} Mbit/s" if self.mbit else "sin límite"


class Traffic:
    """Requests answered and bytes sent by one server since the last reset, each byte with its moment."""

    def __init__(self):
        self.lock = threading.Lock()
        self.requests = 0
        self.bytes = 0
        self.times: list[float] = []      # time.time() of each write…
        self.totals: list[int] = []       # …and the bytes sent up to and including it

    def reset(self) -> None:
        with self.lock:
            self.requests = 0
            self.bytes = 0
            self.times, self.totals = [], []

    def count_request(self) -> None:
        with self.lock:
            self.requests += 1

    def add(self, count: int) -> None:
        with self.lock:
            self.bytes += count
            self.times.append(time.time())
            self.totals.append(self.bytes)

    def snapshot(self) -> dict:
        with self.lock:
            return {"requests": self.requests, "bytes": self.bytes}

    def bytes_until(self, moment: float | None) -> int | None:
        """Bytes sent up to `moment` (time.time() seconds), or None without a moment."""
        if moment is None:
            return None
        with self.lock:
            index = bisect.bisect_right(self.times, moment)
            return self.totals[index - 1] if index else 0


class CountingWriter:
    """A handler's output stream: every byte waits its turn on the link, then is counted as sent."""

    def __init__(self, stream, traffic: Traffic, link: Link | None = None):
        self.stream = stream
        self.traffic = traffic
        self.link = link

    def write(self, data) -> int:
        view = memoryview(data)
        for start in range(0, len(view), LINK_CHUNK_BYTES):
            piece = view[start:start + LINK_CHUNK_BYTES]
            if self.link is not None:
                self.link.wait(len(piece))
            self.stream.write(piece)
            self.traffic.add(len(piece))
        return len(view)

    def __getattr__(self, name):
        return getattr(self.stream, name)


# ---------------------------------------------------------------------------
# A generic static host that gzips on the fly
# ---------------------------------------------------------------------------

class GenericHostHandler(http.server.BaseHTTPRequestHandler):
    """GET and HEAD of a folder's files, gzip on the fly for text, scripts and wasm, weak ETags, 304s."""

    protocol_version = "HTTP/1.1"
    server_version = "generic"
    root: Path = Path(".")
    traffic: Traffic | None = None
    link: Link | None = None
    compressed: dict = {}
    compressed_lock = threading.Lock()

    def setup(self):
        super().setup()
        if self.traffic is not None:
            self.wfile = CountingWriter(self.wfile, self.traffic, self.link)

    def log_message(self, format, *args):
        pass

    def locate(self) -> Path | None:
        path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
        parts = [part for part in path.split("/") if part not in ("", ".", "..")]
        target = self.root.joinpath(*parts)
        if target.is_dir():
            target = target / "index.html"
        return target if target.is_file() else None

    @classmethod
    def gzipped(cls, target: Path, status: os.stat_result) -> bytes:
        key = (str(target), status.st_mtime_ns, status.st_size)
        with cls.compressed_lock:
            found = cls.compressed.get(key)
        if found is None:
            found = gzip.compress(target.read_bytes(), compresslevel=GENERIC_GZIP_LEVEL, mtime=0)
            with cls.compressed_lock:
                cls.compressed[key] = found
        return found

    def answer(self, with_body: bool) -> None:
        if self.traffic is not None:
            self.traffic.count_request()
        target = self.locate()
        if target is None:
            self.send_error(HTTPStatus.NOT_FOUND)
            return
        status = target.stat()
        content_type = GENERIC_TYPES.get(target.suffix, "application/octet-stream")
        compress = (content_type.startswith(GENERIC_GZIP_TYPES)
                    and "gzip" in self.headers.get("Accept-Encoding", ""))
        etag = f'"{status.st_mtime_ns // 1_000_000_000:x}-{status.st_size:x}"'
        if compress:
            etag = "W/" + etag   # what nginx does to a strong ETag when it compresses
        if etag in [tag.strip() for tag in self.headers.get("If-None-Match", "").split(",")]:
            self.send_response(HTTPStatus.NOT_MODIFIED)
            self.send_header("ETag", etag)
            self.end_headers()
            return
        body = self.gzipped(target, status) if compress else target.read_bytes()
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Last-Modified", email.utils.formatdate(status.st_mtime, usegmt=True))
        self.send_header("ETag", etag)
        if content_type.startswith(GENERIC_GZIP_TYPES):
            self.send_header("Vary", "Accept-Encoding")
        if compress:
            self.send_header("Content-Encoding", "gzip")
        self.end_headers()
        if with_body:
            self.wfile.write(body)

    def do_GET(self):
        self.answer(True)

    def do_HEAD(self):
        self.answer(False)


def make_generic_host(root: Path, traffic: Traffic | None = None, link: Link | None = None):
    """The generic host on root/ at a free loopback port, started; returns (server, url)."""

    class Handler(GenericHostHandler):
        pass

    Handler.root = Path(root).resolve()
    Handler.traffic = traffic
    Handler.link = link
    Handler.compressed = {}
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="bench-generic-host", daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def compress_ahead(root: Path, server) -> None:
    """Every compressible file gzipped once before the rounds: a host's C code does it far faster than Python."""
    handler = server.RequestHandlerClass
    for path in sorted(Path(root).resolve().rglob("*")):
        if path.is_file() and GENERIC_TYPES.get(path.suffix, "").startswith(GENERIC_GZIP_TYPES):
            handler.gzipped(path, path.stat())


# ---------------------------------------------------------------------------
# The deck's server in a process of its own, for a class of visits
# ---------------------------------------------------------------------------

def serve_behind_link(root: Path, mbit: float, stats_path: Path) -> None:
    """`build.py serve`'s server on root/ behind a `mbit` link, until stdin closes; its numbers to stats_path.

    Run as `python -m deckbuild.benchnet ROOT MBIT STATS.json`: the first line
    it prints is the port. The numbers (requests, bytes sent, responses by
    status and those cut short ("abandoned"), the process's peak memory) are
    written at each line read from stdin, and once more when stdin closes.
    """
    from .server import make_server   # the build's own server, as `build.py serve` starts it

    traffic = Traffic()
    server = make_server(root, 0, link=Link(mbit), traffic=traffic)
    thread = threading.Thread(target=server.serve_forever, name="class-server", daemon=True)
    thread.start()
    print(server.server_address[1], flush=True)

    def write_stats() -> None:
        stats_path.write_text(json.dumps({**traffic.snapshot(), "responses": dict(server.stats),
                                          "peak_memory_bytes": read_peak_memory()}), encoding="utf-8")

    for _line in sys.stdin:   # the benchmark asks for the numbers so far; closing stdin ends the server
        write_stats()
        print("ok", flush=True)
    server.shutdown()
    server.server_close()
    if not stats_path.exists():
        write_stats()


def read_peak_memory(pid: int | str = "self") -> int | None:
    """A process's peak resident memory in bytes (Linux's VmHWM), or None where it cannot be read."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


if __name__ == "__main__":
    serve_behind_link(Path(sys.argv[1]), float(sys.argv[2]), Path(sys.argv[3]))
