"""The system packages `python3 build.py test` needs, and how it gets them (standard library only).

`python3 build.py test` provides the browsers it drives the way it provides
`.venv` and `node_modules`: before building, it looks for every package of
SYSTEM_PACKAGES at its minimum version; as root on Debian or Ubuntu it
installs what is missing with apt-get (one line printed per package), and
anywhere else it stops before testing with the one command that installs them.
`python3 build.py serve` never comes here: it needs only Python and Node.

Everything this module asks of the machine goes through a `Host` (whose user,
which system, what a command answers), so its tests never call apt.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from typing import Callable

from .errors import BuildError

# The build runs deck/js's ES modules under node (deckbuild/js/snapshot.mjs imports them as they are,
# with no "type": "module" around them, which Node reads as modules only from 20.19) and inflates the
# wheels with DecompressionStream("deflate-raw") (Node ≥ 20.12). Debian 12's Node 18 does neither.
NODE_MINIMUM = "20.19"
BUILD = "build"          # needed to build and test at all
BROWSERS = "browsers"    # needed by the browser tests (left out by --no-browser)
APT_ENVIRONMENT = {"DEBIAN_FRONTEND": "noninteractive", "LC_ALL": "C.UTF-8"}
# Another engineer's apt-get (or the machine's unattended upgrades) may hold dpkg's lock: wait for it.
APT_LOCK_SECONDS = 600
APT_OUTPUT_LINES = 15   # of a failed apt-get, shown with its error


@dataclass(frozen=True)
class SystemPackage:
    """One Debian package the tests need: why, and from which version.

    `minimum`: for Node, what the build needs (NODE_MINIMUM); for a browser,
    the version the suite has passed with (older ones have not been tried);
    "" where any version does. Checked before and after installing.
    `program`: a program on PATH that stands in for the package when it came
    from elsewhere (Node from NodeSource or nvm brings its own npm).
    """

    name: str
    why: str
    minimum: str = ""
    needed_for: str = BROWSERS
    program: str = ""
    elsewhere: str = ""   # where to get it when the system's apt has it only too old


# The one table: `python3 build.py test` installs these (README: «Inicio rápido»), `.ci/run` lists none.
SYSTEM_PACKAGES = (
    SystemPackage("python3-venv", "crear .venv (venv y ensurepip)", needed_for=BUILD),
    SystemPackage("nodejs", "construir el mazo (esbuild, KaTeX, Pyodide en node) y manejar Firefox (puppeteer-core)",
                  NODE_MINIMUM, needed_for=BUILD, program="node",
                  elsewhere="instala Node 20 o posterior de NodeSource o con nvm (Debian 12 trae la 18)"),
    SystemPackage("npm", "instalar node_modules (npm ci)", needed_for=BUILD, program="npm"),
    SystemPackage("chromium", "las pruebas en Chromium (Playwright lo maneja)", "156"),
    SystemPackage("fonts-dejavu-core", "una letra en el sistema: sin ninguna, Chromium no carga tampoco las del mazo"),
    SystemPackage("firefox-esr", "las pruebas en Firefox (WebDriver BiDi, que Firefox trae)", "153"),
    SystemPackage("libwebkit2gtk-4.1-0", "las pruebas en WebKit: MiniBrowser, el navegador de WebKitGTK", "2.50"),
    SystemPackage("webkit2gtk-driver", "las pruebas en WebKit: WebKitWebDriver, que maneja MiniBrowser", "2.50"),
    SystemPackage("xvfb", "la pantalla virtual en la que se abre MiniBrowser (WebKitGTK no tiene modo sin pantalla)"),
)


def run_quietly(command: list[str], env: dict | None = None) -> subprocess.CompletedProcess:
    """A command's exit code and output (stdout and stderr together); a missing program is code 127."""
    try:
        return subprocess.run(command, capture_output=True, text=True, errors="replace",
                              env={**os.environ, **(env or {})})
    except FileNotFoundError:
        return subprocess.CompletedProcess(command, 127, "", f"no se encuentra «{command[0]}»")


def can_make_venv() -> bool:
    """This Python has venv and ensurepip (Debian's has them only with python3-venv); a venv shares them."""
    return all(importlib.util.find_spec(name) is not None for name in ("venv", "ensurepip"))


def read_os_release() -> dict[str, str]:
    """/etc/os-release as a dict ({} where there is none: not Linux, or a bare system)."""
    fields = {}
    try:
        text = open("/etc/os-release", encoding="utf-8").read()
    except OSError:
        return fields
    for line in text.splitlines():
        key, equals, value = line.partition("=")
        if equals:
            fields[key.strip()] = value.strip().strip('"')
    return fields


@dataclass
class Host:
    """What the set-up asks of this machine; tests give it a fake user, system and commands."""

    euid: int
    os_release: dict[str, str]
    run: Callable[..., subprocess.CompletedProcess] = run_quietly   # (command, env=None)
    which: Callable[[str], str | None] = shutil.which
    venv_works: Callable[[], bool] = can_make_venv
    printed: Callable[[str], None] = field(default=lambda line: print(line, flush=True))

    @classmethod
    def this_machine(cls) -> "Host":
        return cls(euid=os.geteuid() if hasattr(os, "geteuid") else -1, os_release=read_os_release())

    @property
    def is_debian(self) -> bool:
        """Debian, Ubuntu or one of theirs, with apt-get and dpkg to install with."""
        family = {self.os_release.get("ID", "")} | set(self.os_release.get("ID_LIKE", "").split())
        return bool(family & {"debian", "ubuntu"}) and all(
            self.which(program) for program in ("apt-get", "apt-cache", "dpkg-query", "dpkg"))

    def installed_version(self, package: str) -> str | None:
        """The installed version of a Debian package, or None."""
        if not self.which("dpkg-query"):
            return None
        answer = self.run(["dpkg-query", "-W", "-f", "${db:Status-Status} ${Version}", package])
        status, _, version = answer.stdout.strip().partition(" ")
        return version if answer.returncode == 0 and status == "installed" else None

    def candidate_version(self, package: str) -> str | None:
        """The version apt-get would install (apt-cache policy's «Candidate»), or None when it knows none."""
        answer = self.run(["apt-cache", "policy", package])
        for line in answer.stdout.splitlines():
            key, _, value = line.strip().partition(":")
            if key == "Candidate":
                value = value.strip()
                return None if value in ("", "(none)") else value
        return None

    def version_at_least(self, version: str, minimum: str) -> bool:
        """Debian's ordering (epochs, «~»…), as dpkg itself compares."""
        return not minimum or self.run(["dpkg", "--compare-versions", version, "ge", minimum]).returncode == 0


def describe_found(host: Host, package: SystemPackage) -> str | None:
    """The version of `package` this machine has, if it is enough; None when it must be installed."""
    if package.name == "python3-venv":
        return "venv" if host.venv_works() else None
    if package.program and host.which(package.program):
        if package.program != "node":
            return host.which(package.program)
        found = host.run(["node", "--version"]).stdout.strip()
        return found if is_at_least(found.lstrip("v"), package.minimum) else None
    version = host.installed_version(package.name)
    return version if version and host.version_at_least(version, package.minimum) else None


def parse_release(version: str) -> tuple[int, ...]:
    """The leading numbers of a release ("v20.19.2" → (20, 19, 2)); () when it has none."""
    match = re.match(r"v?(\d+(?:\.\d+)*)", version.strip())
    return tuple(int(number) for number in match.group(1).split(".")) if match else ()


def is_at_least(version: str, minimum: str) -> bool:
    """A plain release number (Node's "20.19.2") at or above `minimum` ("20.19")."""
    found = parse_release(version)
    return bool(found) and found >= parse_release(minimum)


def list_missing(host: Host, *, browsers: bool) -> list[SystemPackage]:
    """The table's packages this machine lacks (or has older than their minimum), in table order."""
    wanted = [package for package in SYSTEM_PACKAGES if browsers or package.needed_for == BUILD]
    return [package for package in wanted if describe_found(host, package) is None]


def format_install_command(packages: list[SystemPackage], *, sudo: bool) -> str:
    """The one command that installs `packages` on Debian or Ubuntu."""
    prefix = "sudo " if sudo else ""
    names = " ".join(package.name for package in packages)
    return f"{prefix}apt-get update && {prefix}apt-get install -y --no-install-recommends {names}"


def explain_missing(packages: list[SystemPackage]) -> str:
    return "\n".join(f"    {package.name:<20} {package.why}" for package in packages)


def provide_system_packages(host: Host, *, browsers: bool) -> list[str]:
    """Install what `python3 build.py test` lacks where this process can, else stop with the command.

    Returns the lines printed, one per package installed ([] when nothing was missing).
    """
    missing = list_missing(host, browsers=browsers)
    if not missing:
        return []
    skip = ("\no «python3 build.py test --no-browser» para probar todo lo demás sin navegadores."
            if any(package.needed_for == BROWSERS for package in missing) else "")
    if not host.is_debian:
        raise BuildError(
            "faltan paquetes del sistema que necesitan las pruebas:\n" + explain_missing(missing) +
            "\nEn Debian o Ubuntu se instalan con:\n    " + format_install_command(missing, sudo=True) +
            "\nEn otro sistema, instala sus equivalentes." + skip)
    started = time.perf_counter()
    if host.euid == 0:
        host.printed(f"· paquetes del sistema para las pruebas (apt-get): {' '.join(p.name for p in missing)}…")
        run_apt(host, ["update", "-q"], missing)
        refuse_too_old_candidates(host, missing)
    else:
        # apt's lists may be older than the command's own update would make them: only a package whose
        # distribution is known to lag (Node) is judged by them here.
        refuse_too_old_candidates(host, [package for package in missing if package.elsewhere], missing)
        raise BuildError(
            "faltan paquetes del sistema que necesitan las pruebas:\n" + explain_missing(missing) +
            "\nInstálalos con:\n    " + format_install_command(missing, sudo=True) + skip)
    run_apt(host, ["install", "-y", "-q", "--no-install-recommends", *(package.name for package in missing)], missing)
    lines = [describe_installed(host, package) for package in missing]
    host.printed(f"  ✓ paquetes del sistema ({time.perf_counter() - started:.0f} s)")
    return lines


def run_apt(host: Host, arguments: list[str], packages: list[SystemPackage]) -> None:
    """apt-get, waiting for another apt's lock; a failure stops the run with apt's last lines and the command."""
    command = ["apt-get", "-o", f"DPkg::Lock::Timeout={APT_LOCK_SECONDS}", *arguments]
    answer = host.run(command, APT_ENVIRONMENT)
    if answer.returncode != 0:
        tail = "\n".join((answer.stdout + answer.stderr).strip().splitlines()[-APT_OUTPUT_LINES:])
        raise BuildError(f"«{' '.join(command)}» falló (código {answer.returncode}):\n{tail}\n"
                         "Sin red, o sin esos paquetes en las fuentes de apt, no se pueden instalar; la orden es:\n"
                         "    " + format_install_command(packages, sudo=False))


def refuse_too_old_candidates(host: Host, packages: list[SystemPackage],
                              wanted: list[SystemPackage] | None = None) -> None:
    """Stop before installing anything apt would only give older than the suite needs (Debian 12's Node 18).

    A package apt knows no candidate of (lists not read yet) is left to apt-get itself. `wanted`:
    every package missing, for the command that installs the rest (by default `packages`).
    """
    offered = {package.name: host.candidate_version(package.name) for package in packages if package.minimum}
    too_old = [package for package in packages
               if offered.get(package.name) and not host.version_at_least(offered[package.name], package.minimum)]
    if not too_old:
        return
    reasons = [f"    {package.name}: apt ofrece la {offered[package.name]} y hace falta la {package.minimum} "
               f"o una posterior" + (f"; {package.elsewhere}" if package.elsewhere else "") for package in too_old]
    others = [package for package in (packages if wanted is None else wanted) if package not in too_old]
    rest = ("\nLo demás se instala con:\n    " + format_install_command(others, sudo=host.euid != 0)
            if others else "")
    raise BuildError("las fuentes de apt de este sistema no tienen versiones suficientes:\n" + "\n".join(reasons) + rest)


def describe_installed(host: Host, package: SystemPackage) -> str:
    """After apt-get: the line that says it is there, at a version the suite can use; else stop."""
    found = describe_found(host, package)
    if found is None:
        have = host.installed_version(package.name) or "ninguna versión"
        wanted = f"la {package.minimum} o una posterior" if package.minimum else "que funcione"
        raise BuildError(f"tras apt-get, {package.name} está en {have} y las pruebas necesitan {wanted}: "
                         "revisa las fuentes de apt (en Debian 12, también bookworm-security)")
    line = f"  + {package.name} {host.installed_version(package.name) or found}: {package.why}"
    host.printed(line)
    return line
