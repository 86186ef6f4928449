"""What the deck's server knows of the folder it serves: the manifest, ETags, intact compressed copies, the page's policy.

Stage: part of deckbuild.server (`DeckServer` is a `ServedFolder`; its request
handlers ask it). Everything is read again when the file it comes from
changes (a rebuild), and a compressed copy is checked against its SHA-256
once per version of the file. Also which copy of a file a browser gets
(`choose_encoding`) and how a name is written to the terminal
(`shorten_for_log`).

Standard library only, like deckbuild.server.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path

from .compress import CODINGS
from .files import hash_file
from .policy import policy_for_page

# Content codings the build writes (manifest.json's `encoded`), in order of preference.
ENCODINGS = tuple(CODINGS)
LOG_FIELD_CHARS = 200


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


def shorten_for_log(text: str) -> str:
    printable = "".join(char if char.isprintable() and char.isascii() else f"\\x{ord(char):02x}" for char in text)
    return printable if len(printable) <= LOG_FIELD_CHARS else printable[:LOG_FIELD_CHARS] + "…"


class ServedFolder:
    """One built folder as the server answers from it (see the module)."""

    def __init__(self, root: Path):
        self.root = Path(os.path.realpath(root))
        self._manifest: tuple[float, dict, dict] = (-1.0, {}, {})
        self._policy: tuple[float, str] = (-1.0, "")
        self._checked: dict[tuple, bool] = {}   # compressed copies checked: (path, size, mtime) → intact
        self._checked_lock = threading.Lock()

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
