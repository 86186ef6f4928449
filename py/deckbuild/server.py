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
async iterator of bytes, which the loop streams for as long as it lasts and
its client stays (no idle limit; the stall limit still holds). Given a
`follow` channel, make_server adds its two routes (deckbuild.follow), whose
streams are bounded by the channel's own cap, not by idleness. The folder's
manifest, ETags and compressed copies are deckbuild.servedfolder's.

Standard library only (build.py checks --host and --port with it before building).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import email.utils
import http.server
import io
import ipaddress
import os
import socket
import sys
import threading
import time
import urllib.parse
from collections import Counter
from collections.abc import Iterable
from http import HTTPStatus
from pathlib import Path

from .follow import FollowChannel, add_follow_routes
from .servedfolder import ServedFolder, choose_encoding, shorten_for_log


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


# What _read_head gives for a request whose head did not arrive in time.
HEAD_TIMED_OUT = object()


@dataclasses.dataclass(eq=False)
class Connection:
    """One client connection: where from, since when it waits for a request (None: a request is being answered),
    and whether the server is closing it (then it no longer counts against the limits)."""

    writer: asyncio.StreamWriter
    address: str
    waiting_since: float | None
    closing: bool = False


def find_room(connections: Iterable[Connection], address: str, limits: Limits) -> tuple[bool, Connection | None]:
    """Whether a new connection from `address` may stay, and the one to close for it (None: no need, or none idle).

    Past `max_connections` (or `max_per_address` for its address) the connection that has waited
    longest for its next request makes room. Those already being closed (made room for, or answered
    408) do not count: on a busy machine their tasks end a while later, and counting them would close
    a client that has only just arrived.
    """
    staying = [connection for connection in connections if not connection.closing]
    full = len(staying) >= limits.max_connections
    address_full = (limits.max_per_address is not None
                    and sum(connection.address == address for connection in staying) >= limits.max_per_address)
    if not (full or address_full):
        return True, None
    candidates = [connection for connection in staying if connection.waiting_since is not None
                  and (full or connection.address == address)]
    if not candidates:
        return False, None
    return True, min(candidates, key=lambda connection: connection.waiting_since)


class DeckServer(ServedFolder):
    """One folder over HTTP/1.1 from an asyncio event loop (see the module's docstring).

    Used like socketserver's servers: `serve_forever()` in a thread of its
    own, `shutdown()` from another, then `server_close()`. `link` (an object
    with `reserve(count)` → seconds to wait before sending `count` bytes) and
    `traffic` (with `count_request()` and `add(count)`) let a benchmark put the
    server behind a link of its choosing and count what it sends.
    """

    def __init__(self, root: Path, port: int, handler_class=DeckRequestHandler, host: str = "127.0.0.1", *,
                 limits: Limits = Limits(), link=None, traffic=None):
        super().__init__(root)
        self.handler_class = handler_class
        self.limits = limits
        self.link = link
        self.traffic = traffic
        # Responses by kind ("200", "404"…) and those cut short ("abandoned"), for the benchmark and tests.
        self.stats: Counter = Counter()
        self._connections: dict[asyncio.Task, Connection] = {}
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
        allowed, to_close = find_room(self._connections.values(), address, self.limits)
        if to_close is not None:
            to_close.waiting_since = None
            to_close.closing = True
            to_close.writer.transport.abort()
        return allowed

    async def _connect(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername") or ("", 0)
        address = normalize_address(peer[0])
        if not self._make_room(address):
            writer.transport.abort()
            return
        task = asyncio.current_task()
        connection = Connection(writer, address, time.monotonic())
        self._connections[task] = connection
        try:
            await self._converse(reader, writer, connection, (address, peer[1]))
        except (ConnectionError, TimeoutError, asyncio.IncompleteReadError, OSError):
            pass   # a client that goes away or stalls is no error of the server's
        finally:
            del self._connections[task]
            writer.close()

    async def _converse(self, reader, writer, connection: Connection, client_address) -> None:
        """Requests of one connection, one after another, until it closes, idles or errs."""
        loop = asyncio.get_running_loop()
        while True:
            connection.waiting_since = time.monotonic()
            read = await self._read_head(reader)
            connection.waiting_since = None
            if read is None or connection.closing:
                return
            if read is HEAD_TIMED_OUT:
                connection.closing = True
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
                    await self._send_body(reader, writer, body)
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

    async def _send_body(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, body) -> None:
        if hasattr(body, "__aiter__"):
            await self._send_stream(reader, writer, body)
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

    async def _send_stream(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, stream) -> None:
        """A route's stream, each piece as it comes, until it ends or the client closes the connection.

        A stream may wait for minutes between pieces: no idle limit applies, but
        its client sends nothing after the request, so a read that returns is
        the client leaving (or breaking the protocol), and the stream stops then,
        not at its next piece. A piece the client does not take within
        stall_seconds ends it too.
        """
        leaving = asyncio.ensure_future(reader.read(1))
        piece = None
        try:
            while True:
                piece = asyncio.ensure_future(anext(stream))
                await asyncio.wait((piece, leaving), return_when=asyncio.FIRST_COMPLETED)
                if not piece.done():
                    return
                try:
                    data = piece.result()
                except StopAsyncIteration:
                    return
                await self._send_bytes(writer, data)
        finally:
            leaving.cancel()
            if piece is not None:
                piece.cancel()

    @property
    def piece_bytes(self) -> int:
        # Behind a link, small pieces so that responses share it as they would a real one.
        return getattr(self.link, "piece_bytes", SEND_PIECE_BYTES) if self.link is not None else SEND_PIECE_BYTES



def normalize_address(address: str) -> str:
    """A client's address as one device has it (an IPv4 address mapped into IPv6 as itself)."""
    try:
        parsed = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return address
    mapped = getattr(parsed, "ipv4_mapped", None)
    return str(mapped or parsed)


def make_server(root: Path, port: int = 0, isolated: bool = True, host: str = "127.0.0.1", *,
                limits: Limits | None = None, link=None, traffic=None, follow: FollowChannel | None = None) -> DeckServer:
    """A server for root/ on host:port (0 = a free port), with or without COOP/COEP.

    Serving a network (a host other than loopback), one address holds at most
    NETWORK_MAX_PER_ADDRESS connections unless `limits` says otherwise.
    """
    root = Path(root).resolve()

    class Handler(DeckRequestHandler):
        pass

    Handler.isolated = isolated
    if follow is not None:
        Handler = add_follow_routes(Handler, follow)
    if limits is None:
        limits = Limits(max_per_address=None if is_loopback(host) else NETWORK_MAX_PER_ADDRESS)
    return DeckServer(root, port, Handler, host, limits=limits, link=link, traffic=traffic)


def is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"
