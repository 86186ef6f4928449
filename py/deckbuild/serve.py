"""`build.py serve`: a built folder served until Ctrl+C, and what the terminal says about it.

Stage: a built folder and `--host`/`--port` → deckbuild.server's server,
and the lines that say where to open the deck: on this computer, and on a
network the students' addresses. Serving a network (any host but loopback),
the server also carries the channel on which the students follow the
lecturer (deckbuild.follow), and the terminal prints the lecturer's address
with the channel's key, new at each start. Served on loopback only this
computer sees the deck: there is no one to follow, and no channel.

Standard library only (build.py checks --host and --port with it before building).
"""

from __future__ import annotations

import errno
import ipaddress
import socket
import struct
import urllib.parse
from pathlib import Path

from dpdeck.classroom.protocol import FOLLOW

from .errors import BuildError
from .follow import FollowChannel, new_key
from .paths import display_path
from .server import is_loopback, make_server

ANY_ADDRESS = ("0.0.0.0", "::")
SIOCGIFADDR = 0x8915   # Linux: the IPv4 address of a network interface


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


def format_lecturer_url(host: str, port: int, key: str) -> str:
    """The lecturer's address: the deck's, with the key the deck takes out of it at once (page/follow.js)."""
    return format_url(host, port) + "?" + urllib.parse.urlencode({FOLLOW["keyParam"]: key})


def describe_addresses(host: str, port: int, lecturer_key: str | None = None) -> list[str]:
    """The lines that say which address to open here, which one the students open and, with a key, the lecturer's."""
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
    if lecturer_key:
        lecturer_host = "localhost" if host in ANY_ADDRESS else host
        lines.append("  el profesor, para que los estudiantes puedan seguirlo, abre (la clave es secreta y "
                     "nueva en cada arranque: no proyectes esta terminal):")
        lines.append(f"    {format_lecturer_url(lecturer_host, port, lecturer_key)}")
    lines.append("  Por la red la página llega por http sin cifrar y el navegador no la aísla: «detener» "
                 "reinicia Python en lugar de interrumpirlo. Todo lo demás funciona igual.")
    return lines


def serve(out: Path, port: int, host: str = "127.0.0.1") -> None:
    """Serve out/ until Ctrl+C; on a network, with the channel on which the class follows the lecturer."""
    key = None if is_loopback(host) else new_key()
    try:
        server = make_server(out, port, host=host, follow=FollowChannel(key) if key else None)
    except OSError as error:
        raise BuildError(describe_bind_error(error, host, port)) from None
    port = server.server_address[1]
    lines = describe_addresses(host, port, key)
    print(f"\nSirviendo {display_path(out)}:", *lines, "(Ctrl+C para terminar)", sep="\n", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("\nservidor detenido")
    finally:
        server.server_close()
