"""The deck's server: static files with cross-origin isolation, revalidation, compression and no surprises.

Stage: a built folder → http://HOST:PORT/ (127.0.0.1 by default; 0.0.0.0 serves
a classroom on the local network). COOP/COEP make the page cross-origin
isolated (SharedArrayBuffer, so Stop interrupts Python at once); ETags come from
manifest.json, so a rebuild is seen at once and an unchanged file answers 304.
A file the build also wrote compressed (manifest.json's `encoded`: brotli and
gzip copies) is sent compressed to a browser that accepts it, with
`Content-Encoding`, `Vary: Accept-Encoding` and an ETag of its own; the
browser hands the page the same bytes either way.

Whatever arrives, the answer is an HTTP status and at most one log line, never
a traceback: a malformed request line or binary garbage, a path with a NUL or
that is not UTF-8 → 400; a request line over 64 KB → 414; anything outside the
folder (`..`, a symlink that leads out of it), a folder without index.html → 404,
never a directory listing. Every answer carries `X-Content-Type-Options:
nosniff`; pages and scripts (what becomes a document or a worker, where a
<meta> policy does not reach) carry the deck's Content-Security-Policy,
composed by deckbuild.policy as the page's <meta> is.

A classroom cannot take it down (`Limits`): one event loop holds every
connection, so a slow or idle client costs a socket, never a thread; a request's
line and headers must arrive within `head_seconds` of its first byte (a client
that sends a byte every few seconds is cut off), an idle connection is closed
after `idle_seconds`, and a response the client stops reading for
`stall_seconds` is abandoned. Past `max_connections` the connection that has
waited longest for its next request is closed to make room; on a network,
one address holds at most `max_per_address` connections. Files are sent with
sendfile from the loop; the request's own work (finding the file, its ETag,
the page's policy) runs in a bounded pool of `workers` threads.

One more route is one entry in `DeckRequestHandler.ROUTES`: its method writes
the head as any handler does and may leave in `self.body` an open file or an
async iterator of bytes, which the loop streams for as long as it lasts.

Standard library only (build.py checks --host and --port with it before building).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import email.utils
import errno
import http.server
import io
import ipaddress
import json
import os
import socket
import struct
import sys
import threading
import time
import urllib.parse
from collections import Counter
from http import HTTPStatus
from pathlib import Path

from .compress import CODINGS
from .errors import BuildError
from .files import hash_file
from .paths import display_path
from .policy import policy_for_page


@dataclasses.dataclass(frozen=True)
class Limits:
    """How long and how much a client may take (seconds, connections, threads)."""

    head_seconds: float = 10        # from a request's first byte to the end of its headers
    idle_seconds: float = 30        # a kept-alive connection with no new request
    stall_seconds: float = 30       # a response the client takes no more bytes of
    max_connections: int = 512      # open at once; beyond, the longest-waiting idle one is closed
    max_per_address: int | None = None   # per client address (serve() sets it when serving a network)
    workers: int = 8                # threads for the requests' own work (files, ETags, the policy)


# On a network, one device (a student's browser opens at most 6 connections to a
# server, a few tabs a few more) gets this many; a laptop opening hundreds is cut off.
NETWORK_MAX_PER_ADDRESS = 32
# How often serve_forever looks for a shutdown(): it returns within this long.
SHUTDOWN_POLL_SECONDS = 0.05
# A request's line and headers are read up to this many bytes; a longer request
# line is answered 414 and longer headers 431 (http.server's own limits are 64 KB a line).
HEAD_LIMIT = 128 * 1024
# A file goes out in pieces of this size, each within stall_seconds.
SEND_PIECE_BYTES = 1 << 20
LISTEN_BACKLOG = 1024
# A policy governs what becomes a document or a worker: pages (and error pages) and scripts.
POLICY_TYPES = ("text/html", "text/javascript")
# Content codings the build writes (manifest.json's `encoded`), in order of preference.
ENCODINGS = tuple(CODINGS)
LOG_FIELD_CHARS = 200
ANY_ADDRESS = ("0.0.0.0", "::")
SIOCGIFADDR = 0x8915   # Linux: the IPv4 address of a network interface
ERROR_TEXTS = {HTTPStatus.BAD_REQUEST: "petición mal formada",
               HTTPStatus.NOT_FOUND: "no existe en el mazo",
               HTTPStatus.REQUEST_TIMEOUT: "la petición tardó demasiado en llegar",
               HTTPStatus.REQUEST_URI_TOO_LONG: "la URL es demasiado larga",
               HTTPStatus.NOT_IMPLEMENTED: "solo se admiten GET y HEAD",
               HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE: "cabeceras demasiado grandes"}
ERROR_PAGE = """<!doctype html>
<html lang="es"><meta charset="utf-8"><title>Error %(code)d</title>
<h1>Error %(code)d</h1><p>%(explain)s</p></html>
"""


def find_path_problem(target: str) -> str | None:
    """Why a request target is malformed (Spanish), or None when it is a usable path."""
    if not target.startswith("/"):
        return "la petición no nombra una ruta («/…»)"
    if any(not 0x21 <= ord(char) <= 0x7e for char in target):
        return "la ruta tiene caracteres que una URL no puede llevar sin codificar"
    path = target.split("?", 1)[0].split("#", 1)[0]
    try:
        decoded = urllib.parse.unquote(path, errors="strict")
    except UnicodeDecodeError:
        return "la ruta no es UTF-8 válido"
    if any(ord(char) < 0x20 or ord(char) == 0x7f for char in decoded):
        return "la ruta lleva un carácter de control (por ejemplo %00)"
    return None


def choose_encoding(accept_encoding: str, available) -> str | None:
    """The first of ENCODINGS that is `available` and that Accept-Encoding allows (q > 0), or None.

    RFC 9110 §12.5.3: a coding listed with q=0 is refused; `*` stands for any
    coding not listed; no header at all means identity only, here.
    """
    weights = {}
    for item in accept_encoding.split(","):
        name, _, parameters = item.strip().partition(";")
        quality = 1.0
        for parameter in parameters.split(";"):
            key, _, value = parameter.strip().partition("=")
            if key.strip().lower() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        if name.strip():
            weights[name.strip().lower()] = quality
    for encoding in ENCODINGS:
        if encoding in available and weights.get(encoding, weights.get("*", 0.0)) > 0:
            return encoding
    return None


class DeckRequestHandler(http.server.SimpleHTTPRequestHandler):
    """One request of one folder's files, with isolation, revalidation, compression, nosniff and the page's CSP.

    The server reads the request's head and gives it to a handler made for it
    (`for_request`); the handler writes the response's head into memory and
    leaves the body for the server to stream (`self.body`).
    """

    # Exact paths answered by a method of this class instead of a file: {"/path": "method_name"}.
    ROUTES: dict[str, str] = {}
    isolated = True
    protocol_version = "HTTP/1.1"   # keep-alive: a reload revalidates ~100 files over few connections
    default_request_version = "HTTP/1.0"   # a garbled request line still gets a status line back
    server_version = "dpdeck"
    sys_version = ""
    error_message_format = ERROR_PAGE
    error_content_type = "text/html; charset=utf-8"
    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".wasm": "application/wasm", ".js": "text/javascript", ".mjs": "text/javascript",
        ".json": "application/json", ".css": "text/css", ".html": "text/html",
        ".whl": "application/zip", ".zip": "application/zip", ".png": "image/png",
        ".svg": "image/svg+xml", ".woff2": "font/woff2", ".woff": "font/woff", ".ttf": "font/ttf",
        ".csv": "text/csv",
    }

    @classmethod
    def for_request(cls, server: DeckServer, client_address, head: bytes, complete: bool) -> DeckRequestHandler:
        """A handler for one request whose line and headers are `head` (`complete`: they ended)."""
        handler = cls.__new__(cls)
        handler.server = server
        handler.client_address = client_address
        handler.request = None
        handler.directory = str(server.root)
        handler.rfile = io.BytesIO(head)
        handler.wfile = io.BytesIO()
        handler.head_complete = complete
        handler.close_connection = True
        handler.path = ""          # log_request may run before parse_request has set it
        handler.requestline = ""
        handler.command = None
        handler.status = None
        handler.body = None
        handler._etag = None
        handler._content_type = "text/html"   # error pages
        handler._vary = False
        return handler

    def answer(self) -> tuple[bytes, object, bool]:
        """Handle the request: (the response's head, its body to stream or None, whether to close after)."""
        self.handle_one_request()
        if self.body is not None and self.command == "HEAD":
            self.close_body()
        return self.wfile.getvalue(), self.body, self.close_connection

    def close_body(self) -> None:
        if hasattr(self.body, "close"):
            self.body.close()
        self.body = None

    def parse_request(self):
        if not super().parse_request():
            # A request line of only spaces is left unanswered by http.server.
            if self.raw_requestline.strip(b"\r\n") and not self.requestline.split():
                self.send_error(HTTPStatus.BAD_REQUEST)
            return False
        problem = find_path_problem(self.path)
        if problem:
            self.send_error(HTTPStatus.BAD_REQUEST, explain=problem)
            return False
        if not self.head_complete:
            self.send_error(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE)
            return False
        return True

    def send_response(self, code, message=None):
        self.status = int(code)
        super().send_response(code, message)

    def send_error(self, code, message=None, explain=None):
        # The status line keeps HTTP's own reason phrase (ASCII); the page says what happened in
        # Spanish, never echoing the request back.
        self._etag = None
        self._vary = False
        self._content_type = "text/html"
        super().send_error(code, None, explain or ERROR_TEXTS.get(code, "error"))

    def end_headers(self):
        if self.isolated:
            # SharedArrayBuffer (and so interrupting Python) needs a cross-origin isolated page.
            self.send_header("Cross-Origin-Opener-Policy", "same-origin")
            self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
            self.send_header("Cross-Origin-Resource-Policy", "same-origin")
        self.send_header("X-Content-Type-Options", "nosniff")
        if self._content_type.startswith(POLICY_TYPES):
            self.send_header("Content-Security-Policy", self.server.content_security_policy())
        # Always revalidate: unchanged files answer 304, a rebuild is seen at once.
        self.send_header("Cache-Control", "no-cache")
        if self._vary:
            self.send_header("Vary", "Accept-Encoding")
        if self._etag:
            self.send_header("ETag", self._etag)
        super().end_headers()

    def do_GET(self):
        route = self.ROUTES.get(urllib.parse.urlsplit(self.path).path)
        if route:
            getattr(self, route)()
        else:
            self.body = self.send_head()   # streamed by the server after the head

    def do_HEAD(self):
        self.do_GET()

    def locate_file(self) -> tuple[Path | None, bool]:
        """(the file a GET names inside the folder, or None; whether to redirect to the folder's "/")."""
        path = urllib.parse.unquote(self.path.split("?", 1)[0].split("#", 1)[0])
        parts = [part for part in path.split("/") if part not in ("", ".")]
        if ".." in parts:
            return None, False
        root = self.server.root
        target = Path(os.path.realpath(root.joinpath(*parts)))
        if not target.is_relative_to(root):
            return None, False   # a symlink that leads out of the folder
        if target.is_dir():
            index = Path(os.path.realpath(target / "index.html"))
            if not index.is_relative_to(root) or not index.is_file():
                return None, False   # no directory listings
            return index, not path.endswith("/")
        return (target, False) if target.is_file() else (None, False)

    def send_head(self):
        self._etag = None
        self._content_type = "text/html"
        try:
            target, redirect = self.locate_file()
        except (OSError, ValueError):   # a name too long for the file system, and the like
            target, redirect = None, False
        if target is None:
            self.send_error(HTTPStatus.NOT_FOUND)
            return None
        if redirect:
            parts = urllib.parse.urlsplit(self.path)
            self.send_response(HTTPStatus.MOVED_PERMANENTLY)
            self.send_header("Location", urllib.parse.urlunsplit(parts._replace(path=parts.path + "/")))
            self.send_header("Content-Length", "0")
            self.end_headers()
            return None
        encodings = self.server.encodings_for(target)
        encoding = choose_encoding(self.headers.get("Accept-Encoding", ""), encodings)
        try:
            handle = open(encodings[encoding] if encoding else target, "rb")
        except OSError:
            self.send_error(HTTPStatus.NOT_FOUND)
            return None
        try:
            status = os.fstat(handle.fileno())
            self._vary = bool(encodings)
            self._etag = self.server.etag_for(target, status, encoding)
            candidates = [tag.strip() for tag in self.headers.get("If-None-Match", "").split(",")]
            if self._etag in candidates:
                handle.close()
                self.send_response(HTTPStatus.NOT_MODIFIED)
                self.end_headers()
                return None
            self.send_response(HTTPStatus.OK)
            self._content_type = self.guess_type(str(target))
            self.send_header("Content-Type", self._content_type)
            if encoding:
                self.send_header("Content-Encoding", encoding)
            self.send_header("Content-Length", str(status.st_size))
            self.send_header("Last-Modified", email.utils.formatdate(status.st_mtime, usegmt=True))
            self.end_headers()
            return handle
        except BaseException:
            handle.close()
            raise

    def list_directory(self, path):   # never reached through send_head; kept closed all the same
        self.send_error(HTTPStatus.NOT_FOUND)
        return None

    def log_request(self, code="-", size="-"):
        if str(code)[:1] in "45" and int(code) != HTTPStatus.REQUEST_TIMEOUT and not self.path.endswith("/favicon.ico"):
            super().log_request(code, size)

    def log_error(self, format, *args):
        pass  # log_request reports failed requests, once

    def log_message(self, format, *args):
        """One line, printable, short: a request line of garbage cannot write escapes to the terminal."""
        text = format % tuple(shorten_for_log(arg) if isinstance(arg, str) else arg for arg in args)
        sys.stderr.write(f"{self.address_string()} [{self.log_date_time_string()}] {text}\n")


def shorten_for_log(text: str) -> str:
    printable = "".join(char if char.isprintable() and char.isascii() else f"\\x{ord(char):02x}" for char in text)
    return printable if len(printable) <= LOG_FIELD_CHARS else printable[:LOG_FIELD_CHARS] + "…"


# What _read_head gives for a request whose head did not arrive in time.
HEAD_TIMED_OUT = object()


@dataclasses.dataclass(eq=False)
class Connection:
    """One client connection: where from, and since when it waits for a request (None: a request is being answered)."""

    writer: asyncio.StreamWriter
    address: str
    waiting_since: float | None
    closed_for_room: bool = False


class DeckServer:
    """One folder over HTTP/1.1 from an asyncio event loop (see the module's docstring).

    Used like socketserver's servers: `serve_forever()` in a thread of its
    own, `shutdown()` from another, then `server_close()`. `link` (an object
    with `reserve(count)` → seconds to wait before sending `count` bytes) and
    `traffic` (with `count_request()` and `add(count)`) let a benchmark put the
    server behind a link of its choosing and count what it sends.
    """

    def __init__(self, root: Path, port: int, handler_class=DeckRequestHandler, host: str = "127.0.0.1", *,
                 limits: Limits = Limits(), link=None, traffic=None):
        self.root = Path(os.path.realpath(root))
        self.handler_class = handler_class
        self.limits = limits
        self.link = link
        self.traffic = traffic
        # Responses by kind ("200", "404"…) and those cut short ("abandoned"), for the benchmark and tests.
        self.stats: Counter = Counter()
        self._manifest: tuple[float, dict, dict] = (-1.0, {}, {})
        self._policy: tuple[float, str] = (-1.0, "")
        self._checked: dict[tuple, bool] = {}   # compressed copies checked: (path, size, mtime) → intact
        self._checked_lock = threading.Lock()
        self._connections: dict[asyncio.Task, Connection] = {}
        self._per_address: Counter = Counter()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None
        self._shutdown_requested = False
        self._stopped = threading.Event()
        self._stopped.set()
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.socket = socket.create_server((host, port), family=family, backlog=LISTEN_BACKLOG,
                                           dualstack_ipv6=family == socket.AF_INET6 and socket.has_dualstack_ipv6())
        self.server_address = self.socket.getsockname()[:2]
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=limits.workers, thread_name_prefix="deck-server")

    # ------------------------------------------------------------ running and stopping

    def serve_forever(self, poll_interval: float = SHUTDOWN_POLL_SECONDS) -> None:
        """Serve until shutdown() (or Ctrl+C, which propagates)."""
        self._stopped.clear()
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            loop.run_until_complete(self._serve())
        finally:
            for task in list(self._connections):
                task.cancel()
            if self._connections:
                loop.run_until_complete(asyncio.gather(*self._connections, return_exceptions=True))
            loop.close()
            self._loop = None
            self._stopped.set()

    def shutdown(self) -> None:
        """Stop serve_forever() and wait until it has returned (from another thread)."""
        self._shutdown_requested = True
        loop, stopping = self._loop, self._stopping
        if loop is not None and stopping is not None:
            try:
                loop.call_soon_threadsafe(stopping.set)
            except RuntimeError:   # the loop has just closed
                pass
        self._stopped.wait()

    def server_close(self) -> None:
        self.socket.close()
        self._pool.shutdown(wait=False, cancel_futures=True)

    async def _serve(self) -> None:
        self._stopping = asyncio.Event()
        if self._shutdown_requested:
            return
        server = await asyncio.start_server(self._connect, sock=self.socket, limit=HEAD_LIMIT, backlog=LISTEN_BACKLOG)
        try:
            await self._stopping.wait()
        finally:
            server.close()

    # ------------------------------------------------------------ connections

    def _make_room(self, address: str) -> bool:
        """Whether a new connection from `address` may stay, closing the longest-waiting idle one if need be."""
        limits = self.limits
        full = len(self._connections) >= limits.max_connections
        address_full = limits.max_per_address is not None and self._per_address[address] >= limits.max_per_address
        if not (full or address_full):
            return True
        candidates = [connection for connection in self._connections.values() if connection.waiting_since is not None
                      and (full or connection.address == address)]
        if not candidates:
            return False
        oldest = min(candidates, key=lambda connection: connection.waiting_since)
        oldest.waiting_since = None
        oldest.closed_for_room = True
        oldest.writer.transport.abort()
        return True

    async def _connect(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername") or ("", 0)
        address = normalize_address(peer[0])
        if not self._make_room(address):
            writer.transport.abort()
            return
        task = asyncio.current_task()
        connection = Connection(writer, address, time.monotonic())
        self._connections[task] = connection
        self._per_address[address] += 1
        try:
            await self._converse(reader, writer, connection, (address, peer[1]))
        except (ConnectionError, TimeoutError, asyncio.IncompleteReadError, OSError):
            pass   # a client that goes away or stalls is no error of the server's
        finally:
            del self._connections[task]
            self._per_address[address] -= 1
            if not self._per_address[address]:
                del self._per_address[address]
            writer.close()

    async def _converse(self, reader, writer, connection: Connection, client_address) -> None:
        """Requests of one connection, one after another, until it closes, idles or errs."""
        loop = asyncio.get_running_loop()
        while True:
            connection.waiting_since = time.monotonic()
            read = await self._read_head(reader)
            connection.waiting_since = None
            if read is None or connection.closed_for_room:
                return
            if read is HEAD_TIMED_OUT:
                await self._send_bytes(writer, self._timeout_answer(client_address))
                return
            head, complete = read
            handler = self.handler_class.for_request(self, client_address, head, complete)
            if self.traffic is not None:
                self.traffic.count_request()
            try:
                response_head, body, close = await loop.run_in_executor(self._pool, handler.answer)
            except Exception as error:   # noqa: BLE001 — one line, never a traceback
                sys.stderr.write(f"{client_address[0]}: petición abandonada ({type(error).__name__}: {error})\n")
                return
            self.stats[str(handler.status or "")] += 1
            try:
                await self._send_bytes(writer, response_head)
                if body is not None:
                    await self._send_body(writer, body)
            except BaseException:
                self.stats["abandoned"] += 1
                raise
            finally:
                if hasattr(body, "close"):
                    body.close()
            if close:
                return

    async def _read_head(self, reader: asyncio.StreamReader):
        """(the next request's line and headers, whether they ended); None if the client closed or idled;
        HEAD_TIMED_OUT if they did not arrive within head_seconds of their first byte."""
        try:
            first = await asyncio.wait_for(reader.read(1), self.limits.idle_seconds)
        except TimeoutError:
            return None
        if not first:
            return None
        try:
            rest = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), self.limits.head_seconds)
            return first + rest, True
        except TimeoutError:
            return HEAD_TIMED_OUT
        except asyncio.LimitOverrunError:
            return first + await reader.read(HEAD_LIMIT), False
        except asyncio.IncompleteReadError as error:
            # The client stopped sending half-way: what arrived still gets its status (garbage → 400).
            return first + error.partial, False

    def _timeout_answer(self, client_address) -> bytes:
        handler = self.handler_class.for_request(self, client_address, b"", True)
        handler.request_version = "HTTP/1.1"
        handler.send_error(HTTPStatus.REQUEST_TIMEOUT)
        self.stats[str(int(HTTPStatus.REQUEST_TIMEOUT))] += 1
        return handler.wfile.getvalue()

    async def _pace(self, count: int) -> None:
        if self.link is not None:
            delay = self.link.reserve(count)
            if delay:
                await asyncio.sleep(delay)

    def _count(self, count: int) -> None:
        # Counted as the bytes are handed to the socket, before the client can have them: a client that
        # has read a response always finds it counted, and a late count never lands after a reset.
        if self.traffic is not None and count:
            self.traffic.add(count)

    async def _send_bytes(self, writer: asyncio.StreamWriter, data: bytes) -> None:
        for start in range(0, len(data), self.piece_bytes):
            piece = data[start:start + self.piece_bytes]
            await self._pace(len(piece))
            self._count(len(piece))
            writer.write(piece)
            await asyncio.wait_for(writer.drain(), self.limits.stall_seconds)

    async def _send_body(self, writer: asyncio.StreamWriter, body) -> None:
        if hasattr(body, "__aiter__"):   # a route's stream: each piece as it comes
            async for piece in body:
                await self._send_bytes(writer, piece)
            return
        loop = asyncio.get_running_loop()
        size = os.fstat(body.fileno()).st_size
        offset = 0
        while offset < size:
            count = min(self.piece_bytes, size - offset)
            await self._pace(count)
            self._count(count)
            sent = await asyncio.wait_for(loop.sendfile(writer.transport, body, offset, count),
                                          self.limits.stall_seconds)
            if sent < count:
                raise ConnectionError("el archivo se acortó mientras se enviaba")
            offset += sent

    @property
    def piece_bytes(self) -> int:
        # Behind a link, small pieces so that responses share it as they would a real one.
        return getattr(self.link, "piece_bytes", SEND_PIECE_BYTES) if self.link is not None else SEND_PIECE_BYTES

    # ------------------------------------------------------------ what the handlers ask

    def content_security_policy(self) -> str:
        """The deck's policy with the served page's inline scripts allowed by hash (deckbuild.policy).

        The build allows no inline script in the page but its own, so this is
        the policy of the page's <meta>; composed again when index.html changes
        (a rebuild). A folder without a page still gets the deck's policy.
        """
        index = self.root / "index.html"
        try:
            mtime = index.stat().st_mtime
            if mtime != self._policy[0]:
                page = index.read_text(encoding="utf-8", errors="replace")
                self._policy = (mtime, policy_for_page(page, header=True))
        except OSError:
            return policy_for_page("", header=True)
        return self._policy[1]

    def read_manifest(self) -> tuple[dict, dict]:
        """manifest.json's ({path: sha256}, {path: {encoding: sha256}}), read again when it changes; empty if none."""
        manifest_path = self.root / "manifest.json"
        try:
            mtime = manifest_path.stat().st_mtime
            if mtime != self._manifest[0]:
                manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
                files, encoded = manifest["files"], manifest.get("encoded", {})
                if not isinstance(files, dict) or not isinstance(encoded, dict):
                    raise ValueError("manifest.json")
                self._manifest = (mtime, files, encoded)
        except (OSError, ValueError, KeyError, TypeError):
            return {}, {}
        return self._manifest[1], self._manifest[2]

    def encodings_for(self, path: Path) -> dict[str, Path]:
        """The compressed copies of a file the manifest lists and the folder holds intact: {encoding: path}."""
        _, encoded = self.read_manifest()
        listed = encoded.get(Path(path).relative_to(self.root).as_posix())
        if not isinstance(listed, dict):
            return {}
        found = {}
        for encoding in ENCODINGS:
            copy = Path(f"{path}.{CODINGS[encoding]}")
            if encoding in listed and self.is_intact(copy, listed[encoding]):
                found[encoding] = copy
        return found

    def is_intact(self, copy: Path, sha256) -> bool:
        """Whether a compressed copy is the one the build wrote (its SHA-256, checked once per version of the file).

        A copy cut short or changed is never sent: the file goes as it is, and
        the console says so once.
        """
        try:
            status = copy.stat()
        except OSError:
            return False
        key = (str(copy), status.st_size, status.st_mtime_ns)
        with self._checked_lock:
            known = self._checked.get(key)
        if known is None:
            known = isinstance(sha256, str) and hash_file(copy) == sha256
            with self._checked_lock:
                self._checked[key] = known
            if not known:
                sys.stderr.write(f"copia comprimida dañada, se envía el archivo sin comprimir: "
                                 f"{shorten_for_log(copy.relative_to(self.root).as_posix())}\n")
        return known

    def etag_for(self, path: Path, status: os.stat_result, encoding: str | None = None) -> str:
        """Strong ETag from the manifest's SHA-256 (stable across rebuilds), else size+mtime; one per encoding."""
        files, _ = self.read_manifest()
        try:
            digest = files.get(Path(path).relative_to(self.root).as_posix())
        except ValueError:
            digest = None
        if isinstance(digest, str) and digest:
            return f'"{digest[:32]}-{encoding}"' if encoding else f'"{digest[:32]}"'
        return f'W/"{status.st_size:x}-{status.st_mtime_ns:x}{"-" + encoding if encoding else ""}"'


def normalize_address(address: str) -> str:
    """A client's address as one device has it (an IPv4 address mapped into IPv6 as itself)."""
    try:
        parsed = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return address
    mapped = getattr(parsed, "ipv4_mapped", None)
    return str(mapped or parsed)


def make_server(root: Path, port: int = 0, isolated: bool = True, host: str = "127.0.0.1", *,
                limits: Limits | None = None, link=None, traffic=None) -> DeckServer:
    """A server for root/ on host:port (0 = a free port), with or without COOP/COEP.

    Serving a network (a host other than loopback), one address holds at most
    NETWORK_MAX_PER_ADDRESS connections unless `limits` says otherwise.
    """
    root = Path(root).resolve()

    class Handler(DeckRequestHandler):
        pass

    Handler.isolated = isolated
    if limits is None:
        limits = Limits(max_per_address=None if is_loopback(host) else NETWORK_MAX_PER_ADDRESS)
    return DeckServer(root, port, Handler, host, limits=limits, link=link, traffic=traffic)


def describe_bind_error(error: OSError, host: str, port: int) -> str:
    """Why the server cannot listen on host:port, in Spanish."""
    if error.errno == errno.EADDRINUSE:
        return f"el puerto {port} ya lo usa otro programa; prueba con otro, por ejemplo --port {port + 1}"
    if error.errno == errno.EACCES:
        return f"el puerto {port} necesita permisos de administrador (los menores que 1024); usa --port 8000"
    if error.errno == errno.EADDRNOTAVAIL:
        return f"la dirección {host} no es de esta máquina; usa 127.0.0.1 o 0.0.0.0"
    return f"no se puede escuchar en {host}:{port} ({error.strerror or error})"


def check_address(host: str, port: int) -> None:
    """Fail now, before a build, if host:port cannot be listened on."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind((host, port))
    except OSError as error:
        raise BuildError(describe_bind_error(error, host, port)) from None


def list_lan_addresses() -> list[str]:
    """This machine's IPv4 addresses on its networks (no loopback), for students to open."""
    import fcntl   # Unix only, like the rest of the build

    found: set[str] = set()
    try:
        interfaces = [name for _, name in socket.if_nameindex()]
    except OSError:
        interfaces = []
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        for name in interfaces:
            try:
                answer = fcntl.ioctl(probe.fileno(), SIOCGIFADDR, struct.pack("256s", name.encode()[:15]))
                found.add(socket.inet_ntoa(answer[20:24]))
            except OSError:
                continue
    try:
        for *_, address in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET):
            found.add(address[0])
    except OSError:
        pass
    usable = [ipaddress.ip_address(address) for address in found]
    return [str(address) for address in sorted(usable)
            if not address.is_loopback and not address.is_link_local and not address.is_unspecified]


def format_url(host: str, port: int) -> str:
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


def is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def describe_addresses(host: str, port: int) -> list[str]:
    """The lines that say which address to open here, and which one the students open."""
    if is_loopback(host):
        return [f"  {format_url('localhost', port)}   (solo este ordenador; con --host 0.0.0.0 lo abre "
                "toda la red local)"]
    if host in ANY_ADDRESS:
        lines = [f"  en este ordenador:  {format_url('localhost', port)}"]
        lan = list_lan_addresses()
        if lan:
            lines.append("  los estudiantes, en la misma red, abren:")
            lines += [f"    {format_url(address, port)}" for address in lan]
        else:
            lines.append("  no se encuentra ninguna dirección de red local: ¿está conectado este ordenador a la red?")
    else:
        lines = [f"  los estudiantes, en la misma red, abren: {format_url(host, port)}"]
    lines.append("  Por la red la página llega por http sin cifrar y el navegador no la aísla: «detener» "
                 "reinicia Python en lugar de interrumpirlo. Todo lo demás funciona igual.")
    return lines


def serve(out: Path, port: int, host: str = "127.0.0.1") -> None:
    """Serve out/ until Ctrl+C."""
    try:
        server = make_server(out, port, host=host)
    except OSError as error:
        raise BuildError(describe_bind_error(error, host, port)) from None
    port = server.server_address[1]
    print(f"\nSirviendo {display_path(out)}:", *describe_addresses(host, port), "(Ctrl+C para terminar)",
          sep="\n", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("\nservidor detenido")
    finally:
        server.server_close()
