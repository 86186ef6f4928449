"""deckbuild.system: `python3 build.py test` installs the packages it needs where it can, else stops with the command.

Nothing here calls apt or dpkg: a FakeHost plays the machine (its user, its
system, what dpkg-query, dpkg and apt-get answer) and records every command.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from deck_fixtures import ROOT
from deckbuild import system
from deckbuild.errors import BuildError
from deckbuild.system import BROWSERS, BUILD, SYSTEM_PACKAGES, Host, provide_system_packages

sys.path.insert(0, str(ROOT))
import build  # noqa: E402  (standard library only at import time)

DEBIAN = {"ID": "debian", "VERSION_ID": "12"}
# What apt would install: each package at a version that meets its minimum.
CANDIDATES = {"python3-venv": "3.11.2-1+b1", "nodejs": "20.19.2+dfsg-1", "npm": "9.2.0~ds1-1",
              "chromium": "156.0.8078.129-1~deb12u1", "fonts-dejavu-core": "2.37-6",
              "firefox-esr": "153.8.0esr-1~deb12u1", "libwebkit2gtk-4.1-0": "2.50.6-1~deb12u2",
              "webkit2gtk-driver": "2.50.6-1~deb12u2", "xvfb": "2:21.1.7-3+deb12u13"}
PROGRAMS_OF = {"nodejs": "node", "npm": "npm"}
BROWSER_PACKAGES = [package.name for package in SYSTEM_PACKAGES if package.needed_for == BROWSERS]


def numbers(version: str) -> tuple[int, ...]:
    """Enough of Debian's ordering for these tests' versions: the epoch, then the numbers in order."""
    epoch, _, rest = version.rpartition(":")
    return (int(epoch or 0), *map(int, re.findall(r"\d+", rest)))


class FakeHost(Host):
    """A machine with `installed` packages (name → version) whose apt-get would install `candidates`."""

    def __init__(self, *, euid=0, os_release=DEBIAN, installed=(), candidates=None, node="v20.20.2",
                 apt_fails=None, venv=True):
        self.packages = {name: CANDIDATES[name] for name in installed}
        self.candidates = dict(CANDIDATES if candidates is None else candidates)
        self.node = node
        self.apt_fails = apt_fails
        self.venv = venv
        self.commands: list[list[str]] = []
        self.lines: list[str] = []
        super().__init__(euid=euid, os_release=dict(os_release), run=self.answer, which=self.find,
                         venv_works=lambda: self.venv or "python3-venv" in self.packages,
                         printed=self.lines.append)

    def find(self, program: str) -> str | None:
        system_programs = {"apt-get", "apt-cache", "dpkg", "dpkg-query"} if self.os_release.get("ID") != "fedora" else set()
        installed = {PROGRAMS_OF[name] for name in self.packages if name in PROGRAMS_OF}
        if self.node:
            installed |= {"node", "npm"}
        return f"/usr/bin/{program}" if program in system_programs | installed else None

    def answer(self, command: list[str], env=None) -> subprocess.CompletedProcess:
        self.commands.append(command)
        done = lambda code=0, out="": subprocess.CompletedProcess(command, code, out, "")  # noqa: E731
        if command[0] == "dpkg-query":
            version = self.packages.get(command[-1])
            return done(0, f"installed {version}") if version else done(1)
        if command[:2] == ["dpkg", "--compare-versions"]:
            return done(0 if numbers(command[2]) >= numbers(command[4]) else 1)
        if command[:2] == ["apt-cache", "policy"]:
            candidate = self.candidates.get(command[2])
            return done(0, f"{command[2]}:\n  Installed: (none)\n  Candidate: {candidate or '(none)'}\n")
        if command[0] == "node":
            return done(0, (self.node or f"v{self.packages['nodejs']}") + "\n")
        if command[0] == "apt-get":
            assert env and env["DEBIAN_FRONTEND"] == "noninteractive"
            if self.apt_fails:
                return subprocess.CompletedProcess(command, 100, "", self.apt_fails)
            if "install" in command:
                for name in command[command.index("--no-install-recommends") + 1:]:
                    self.packages[name] = self.candidates[name]
            return done()
        raise AssertionError(f"orden inesperada: {command}")

    @property
    def apt_commands(self) -> list[list[str]]:
        return [command for command in self.commands if command[0] == "apt-get"]


def all_but(*names: str) -> list[str]:
    return [name for name in CANDIDATES if name not in names]


def test_as_root_on_debian_the_missing_browsers_are_installed_one_line_each():
    host = FakeHost(installed=all_but(*BROWSER_PACKAGES), node=None)
    host.packages.update({"nodejs": CANDIDATES["nodejs"], "npm": CANDIDATES["npm"]})
    lines = provide_system_packages(host, browsers=True)
    update, install = host.apt_commands
    assert "update" in update
    assert install[install.index("--no-install-recommends") + 1:] == BROWSER_PACKAGES
    assert "-y" in install and any(option.startswith("DPkg::Lock::Timeout=") for option in install)
    assert len(lines) == len(BROWSER_PACKAGES)
    for line, name in zip(lines, BROWSER_PACKAGES):
        package = next(package for package in SYSTEM_PACKAGES if package.name == name)
        assert line == f"  + {name} {CANDIDATES[name]}: {package.why}"
    assert host.lines[1:-1] == lines and "apt-get" in host.lines[0] and "✓" in host.lines[-1]
    # Now nothing is missing: a second run installs nothing.
    assert provide_system_packages(host, browsers=True) == [] and len(host.apt_commands) == 2


def test_as_another_user_the_run_stops_at_once_with_the_one_command():
    host = FakeHost(euid=1000, installed=all_but("firefox-esr", "webkit2gtk-driver", "xvfb"))
    with pytest.raises(BuildError) as stop:
        provide_system_packages(host, browsers=True)
    message = str(stop.value)
    assert ("sudo apt-get update && sudo apt-get install -y --no-install-recommends "
            "firefox-esr webkit2gtk-driver xvfb") in message
    assert "--no-browser" in message
    assert host.apt_commands == []


def test_as_another_user_stale_lists_do_not_stand_for_what_apt_would_offer():
    """Before `apt-get update` the lists may offer only bookworm's Chromium 150: the command brings 156."""
    host = FakeHost(euid=1000, installed=all_but("chromium"), candidates={**CANDIDATES, "chromium": "150.0.7871.100-1"})
    with pytest.raises(BuildError, match="sudo apt-get install -y --no-install-recommends chromium\n"):
        provide_system_packages(host, browsers=True)


def test_a_fresh_machine_gets_python_venv_node_and_every_browser_in_one_install():
    host = FakeHost(installed=(), node=None, venv=False)
    lines = provide_system_packages(host, browsers=True)
    install = host.apt_commands[-1]
    assert install[install.index("--no-install-recommends") + 1:] == [package.name for package in SYSTEM_PACKAGES]
    assert [line.split()[1] for line in lines] == [package.name for package in SYSTEM_PACKAGES]


def test_nothing_missing_runs_no_apt_and_prints_nothing():
    host = FakeHost(installed=CANDIDATES)
    assert provide_system_packages(host, browsers=True) == []
    assert host.apt_commands == [] and host.lines == []


def test_an_older_version_than_the_suite_needs_is_installed_again():
    host = FakeHost(installed=CANDIDATES)
    host.packages["firefox-esr"] = "140.12.0esr-1~deb12u1"
    assert [package.name for package in system.list_missing(host, browsers=True)] == ["firefox-esr"]
    provide_system_packages(host, browsers=True)
    assert host.packages["firefox-esr"] == CANDIDATES["firefox-esr"]


def test_what_apt_offers_only_too_old_stops_the_run_before_installing_anything():
    """Debian 12's own Node is 18: the run says where to get a newer one and installs nothing."""
    host = FakeHost(installed=all_but("nodejs", "npm", "xvfb"), node=None,
                    candidates={**CANDIDATES, "nodejs": "18.20.4+dfsg-1~deb12u3"})
    with pytest.raises(BuildError) as stop:
        provide_system_packages(host, browsers=True)
    message = str(stop.value)
    assert "nodejs: apt ofrece la 18.20.4+dfsg-1~deb12u3 y hace falta la 20.19" in message and "NodeSource" in message
    assert "apt-get install -y --no-install-recommends npm xvfb" in message
    assert not any("install" in command for command in host.apt_commands)
    host.euid = 1000   # as another user too: the command alone would not help
    with pytest.raises(BuildError, match="apt ofrece la 18.20.4"):
        provide_system_packages(host, browsers=True)


def test_an_install_still_too_old_stops_the_run_and_says_which():
    host = FakeHost(installed=all_but("firefox-esr"))
    host.candidates["firefox-esr"] = "140.12.0esr-1"
    host.candidate_version = lambda name: CANDIDATES[name]   # apt's lists said 153, the mirror gave 140
    with pytest.raises(BuildError, match=r"firefox-esr está en 140\.12\.0esr-1 y las pruebas necesitan la 153"):
        provide_system_packages(host, browsers=True)


def test_without_network_apt_fails_and_the_run_stops_with_its_error_and_the_command():
    host = FakeHost(installed=all_but("xvfb"), apt_fails="E: Failed to fetch http://deb.debian.org/… Could not resolve")
    with pytest.raises(BuildError) as stop:
        provide_system_packages(host, browsers=True)
    assert "Could not resolve" in str(stop.value)
    assert "apt-get install -y --no-install-recommends xvfb" in str(stop.value)


def test_another_system_stops_with_the_debian_command_and_the_way_out():
    host = FakeHost(os_release={"ID": "fedora"}, installed=())
    with pytest.raises(BuildError) as stop:
        provide_system_packages(host, browsers=True)
    assert "En Debian o Ubuntu" in str(stop.value) and "--no-browser" in str(stop.value)
    assert host.apt_commands == []


def test_debian_ubuntu_and_their_derivatives_with_apt_count_as_debian():
    def host(os_release, programs=("apt-get", "apt-cache", "dpkg", "dpkg-query")):
        return Host(euid=0, os_release=os_release, which=lambda program: "/usr/bin/x" if program in programs else None)

    assert host({"ID": "debian"}).is_debian and host({"ID": "ubuntu", "ID_LIKE": "debian"}).is_debian
    assert host({"ID": "linuxmint", "ID_LIKE": "ubuntu debian"}).is_debian
    assert not host({"ID": "fedora"}).is_debian and not host({}).is_debian
    assert not host({"ID": "debian"}, programs=("dpkg",)).is_debian


def test_without_browsers_only_what_the_build_needs_is_asked_for():
    host = FakeHost(euid=1000, installed=all_but(*BROWSER_PACKAGES))
    assert provide_system_packages(host, browsers=False) == []
    host = FakeHost(euid=1000, installed=(), node=None, venv=False)
    with pytest.raises(BuildError, match="--no-install-recommends python3-venv nodejs npm$"):
        provide_system_packages(host, browsers=False)


def test_node_from_elsewhere_counts_when_it_is_new_enough():
    host = FakeHost(installed=all_but("nodejs", "npm"), node="v20.20.2")
    assert system.list_missing(host, browsers=True) == []
    host = FakeHost(installed=all_but("nodejs", "npm"), node="v18.20.4")
    assert [package.name for package in system.list_missing(host, browsers=True)] == ["nodejs"]


def test_the_table_says_why_and_from_which_version():
    names = [package.name for package in SYSTEM_PACKAGES]
    assert len(names) == len(set(names))
    assert {package.needed_for for package in SYSTEM_PACKAGES} == {BUILD, BROWSERS}
    for package in SYSTEM_PACKAGES:
        assert package.why and (not package.minimum or re.fullmatch(r"\d+(\.\d+)*", package.minimum))
    assert system.is_at_least("v20.19.0", system.NODE_MINIMUM) and system.is_at_least("22.1", system.NODE_MINIMUM)
    assert not system.is_at_least("v20.18.3", system.NODE_MINIMUM) and not system.is_at_least("", system.NODE_MINIMUM)


# ------------------------------------------------------------ build.py: only `test` provides, before anything


class Reached(Exception):
    """build.main got as far as creating .venv."""


@pytest.fixture
def machine(monkeypatch):
    """build.py on a FakeHost; creating .venv raises Reached instead."""
    hosts = []

    def use(host: FakeHost) -> FakeHost:
        hosts.append(host)
        monkeypatch.setattr(build.Host, "this_machine", classmethod(lambda cls: host))
        return host

    def reached():
        raise Reached

    monkeypatch.setattr(build, "ensure_venv", reached)
    return use


def test_build_py_test_as_another_user_stops_before_creating_anything(machine):
    machine(FakeHost(euid=1000, installed=all_but("chromium")))
    with pytest.raises(BuildError, match="sudo apt-get install -y --no-install-recommends chromium"):
        build.main(["test"])


def test_build_py_test_as_root_installs_then_goes_on(machine):
    host = machine(FakeHost(installed=all_but("firefox-esr")))
    with pytest.raises(Reached):
        build.main(["test"])
    assert host.packages["firefox-esr"] == CANDIDATES["firefox-esr"]
    assert host.lines[-2].startswith(f"  + firefox-esr {CANDIDATES['firefox-esr']}: ")


def test_build_py_test_no_browser_and_serve_need_no_browser(machine):
    host = machine(FakeHost(euid=1000, installed=all_but(*BROWSER_PACKAGES)))
    with pytest.raises(Reached):
        build.main(["test", "--no-browser"])
    with pytest.raises(Reached):
        build.main(["serve", "--port", "0"])
    assert host.apt_commands == []
    host = machine(FakeHost(euid=1000, installed=(), node=None, venv=False))
    with pytest.raises(Reached):
        build.main(["serve", "--port", "0"])
    assert host.commands == []
