"""The deck's server: static files with cross-origin isolation, revalidation and no surprises.

Stage: a built folder → http://HOST:PORT/ (127.0.0.1 by default; 0.0.0.0 serves
a classroom on the local network). COOP/COEP make the page cross-origin
isolated (SharedArrayBuffer, so Stop interrupts Python at once); ETags come from
manifest.json, so a rebuild is seen at once and an unchanged file answers 304.

Whatever arrives, the answer is an HTTP status and at most one log line, never
a traceback: a malformed request line or binary garbage, a path with a NUL or
that is not UTF-8 → 400; a request line over 64 KB → 414; anything outside the
folder (`..`, a symlink that leads out of it), a folder without index.html → 404,
never a directory listing. A connection idle for IDLE_SECONDS is closed, and at
most MAX_CONNECTIONS are served at once. Every answer carries
`X-Content-Type-Options: nosniff`; pages and scripts (what becomes a document or
a worker, where a <meta> policy does not reach) carry the deck's
Content-Security-Policy, composed by deckbuild.policy as the page's <meta> is.

Standard library only (build.py checks --host and --port with it before building).
"""

from __future__ import annotations

import email.utils
import errno
import http.server
import ipaddress
import json
import os
import socket
import struct
import sys
import threading
import urllib.parse
from http import HTTPStatus
from pathlib import Path

from .errors import BuildError
from .paths import display_path
from .policy import policy_for_page

IDLE_SECONDS = 30
# How often serve_forever looks for a shutdown(): it returns within this long
# (socketserver's 0.5 s made stopping each of the tests' servers cost half a second).
SHUTDOWN_POLL_SECONDS = 0.05
# A policy governs what becomes a document or a worker: pages (and error pages) and scripts.
POLICY_TYPES = ("text/html", "text/javascript")
MAX_CONNECTIONS = 512
LOG_FIELD_CHARS = 200
ANY_ADDRESS = ("0.0.0.0", "::")
SIOCGIFADDR = 0x8915   # Linux: the IPv4 address of a network interface
ERROR_TEXTS = {HTTPStatus.BAD_REQUEST: "petición mal formada",
               HTTPStatus.NOT_FOUND: "no existe en el mazo",
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
    """Static files of one folder, with isolation, revalidation, nosniff and the page's CSP."""

    isolated = True
    protocol_version = "HTTP/1.1"   # keep-alive: a reload revalidates ~100 files over few connections
    default_request_version = "HTTP/1.0"   # a garbled request line still gets a status line back
    timeout = IDLE_SECONDS          # an idle or stalled connection is closed
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

    def setup(self):
        self.path = ""          # log_request may run before parse_request has set it
        self.requestline = ""
        self._etag = None
        self._content_type = "text/html"   # error pages
        super().setup()

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
        return True

    def send_error(self, code, message=None, explain=None):
        # The status line keeps HTTP's own reason phrase (ASCII); the page says what happened in
        # Spanish, never echoing the request back.
        self._etag = None
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
        if self._etag:
            self.send_header("ETag", self._etag)
        super().end_headers()

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
        try:
            handle = open(target, "rb")
        except OSError:
            self.send_error(HTTPStatus.NOT_FOUND)
            return None
        try:
            status = os.fstat(handle.fileno())
            self._etag = self.server.etag_for(target, status)
            candidates = [tag.strip() for tag in self.headers.get("If-None-Match", "").split(",")]
            if self._etag in candidates:
                handle.close()
                self.send_response(HTTPStatus.NOT_MODIFIED)
                self.end_headers()
                return None
            self.send_response(HTTPStatus.OK)
            self._content_type = self.guess_type(str(target))
            self.send_header("Content-Type", self._content_type)
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
        if str(code)[:1] in "45" and not self.path.endswith("/favicon.ico"):
            super().log_request(code, size)

    def log_error(self, format, *args):
        pass  # log_request reports failed requests, once; an idle connection that closes is no error

    def log_message(self, format, *args):
        """One line, printable, short: a request line of garbage cannot write escapes to the terminal."""
        text = format % tuple(shorten_for_log(arg) if isinstance(arg, str) else arg for arg in args)
        sys.stderr.write(f"{self.address_string()} [{self.log_date_time_string()}] {text}\n")


def shorten_for_log(text: str) -> str:
    printable = "".join(char if char.isprintable() and char.isascii() else f"\\x{ord(char):02x}" for char in text)
    return printable if len(printable) <= LOG_FIELD_CHARS else printable[:LOG_FIELD_CHARS] + "…"


class DeckServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, root: Path, port: int, handler, host: str = "127.0.0.1"):
        self.root = Path(os.path.realpath(root))
        self._manifest: tuple[float, dict] = (-1.0, {})
        self._policy: tuple[float, str] = (-1.0, "")
        self._connections = threading.BoundedSemaphore(MAX_CONNECTIONS)
        self.address_family = socket.AF_INET6 if ":" in host else socket.AF_INET
        super().__init__((host, port), handler)

    def serve_forever(self, poll_interval: float = SHUTDOWN_POLL_SECONDS):
        super().serve_forever(poll_interval)

    def server_bind(self):
        if self.address_family == socket.AF_INET6:
            # "::" serves IPv4 too, where the system allows it.
            self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        super().server_bind()

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

    def etag_for(self, path: Path, status: os.stat_result) -> str:
        """Strong ETag from the manifest's SHA-256 (stable across rebuilds), else size+mtime."""
        manifest_path = self.root / "manifest.json"
        try:
            mtime = manifest_path.stat().st_mtime
            if mtime != self._manifest[0]:
                self._manifest = (mtime, json.loads(manifest_path.read_text(encoding="utf-8"))["files"])
            digest = self._manifest[1].get(Path(path).relative_to(self.root).as_posix())
            if isinstance(digest, str) and digest:
                return f'"{digest[:32]}"'
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            pass
        return f'W/"{status.st_size:x}-{status.st_mtime_ns:x}"'

    def process_request(self, request, client_address):
        # Past MAX_CONNECTIONS a new connection is closed at once instead of queueing a thread.
        if not self._connections.acquire(blocking=False):
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._connections.release()
            raise

    def process_request_thread(self, request, client_address):
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._connections.release()

    def handle_error(self, request, client_address):
        # A client that goes away or stalls is no error of the server's; anything else is logged in
        # one line, never as a traceback.
        error = sys.exc_info()[1]
        if isinstance(error, (ConnectionError, TimeoutError)):
            return
        sys.stderr.write(f"{client_address[0]}: petición abandonada ({type(error).__name__}: {error})\n")


def make_server(root: Path, port: int = 0, isolated: bool = True, host: str = "127.0.0.1") -> DeckServer:
    """A server for root/ on host:port (0 = a free port), with or without COOP/COEP."""
    root = Path(root).resolve()

    class Handler(DeckRequestHandler):
        pass

    Handler.isolated = isolated

    def factory(*args, **kwargs):
        return Handler(*args, directory=str(root), **kwargs)

    return DeckServer(root, port, factory, host)


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
