"""runtime.json's `packagesCopy`: what a device's copy of the packages must be, from the build.

The worker accepts a copy of the boot's unpacked wheels only against this
description (deck/js: packagecopy.js); tests/js/test_packages_copy.py checks
that the worker's own unpacking of the shipped wheels gives exactly it.
"""

from __future__ import annotations

import base64
import hashlib
import json
import zipfile

import pytest

from deckbuild.devicecopy import compute_packages_copy, describe_packages_copy
from deckbuild.errors import BuildError


def write_wheel(path, entries):
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in entries:
            archive.writestr(name, data)


def test_the_description_lists_every_file_in_archive_order_and_hashes_them(tmp_path):
    write_wheel(tmp_path / "a.whl", [("a/", b""), ("a/__init__.py", b"x = 1\n"), ("a/_c.so", b"\0asm")])
    write_wheel(tmp_path / "b.whl", [("b.py", b"y = 2\n")])
    preload = [{"file": "a.whl", "integrity": "sha256-a"}, {"file": "b.whl", "integrity": "sha256-b"}]
    description = compute_packages_copy(tmp_path, preload)
    assert description["wheels"] == [{"files": [["a/__init__.py", 6], ["a/_c.so", 4]]}, {"files": [["b.py", 6]]}]
    assert description["size"] == 16
    digest = hashlib.sha256(b"x = 1\n\0asmy = 2\n").digest()
    assert description["integrity"] == "sha256-" + base64.b64encode(digest).decode()


@pytest.mark.parametrize("name", ["../fuera.py", "/etc/fuera.py", "a/../../fuera.py"])
def test_a_path_that_leaves_site_packages_stops_the_build(tmp_path, name):
    write_wheel(tmp_path / "a.whl", [("a/__init__.py", b""), (name, b"x")])
    with pytest.raises(BuildError, match="saldría de site-packages"):
        compute_packages_copy(tmp_path, [{"file": "a.whl", "integrity": "sha256-a"}])


def test_the_description_is_cached_by_the_wheels_and_checked_on_every_hit(tmp_path):
    write_wheel(tmp_path / "a.whl", [("a.py", b"1")])
    preload = [{"file": "a.whl", "integrity": "sha256-a"}]
    cache = tmp_path / "cache"
    first = describe_packages_copy(tmp_path, preload, cache=cache)
    (stored,) = cache.glob("*/packagecopy.json")
    stored.write_text(json.dumps({**first, "size": 999}))
    # Damaged: made again, never used as it is.
    assert describe_packages_copy(tmp_path, preload, cache=cache) == first


def test_the_built_deck_describes_its_boot_wheels(dist_dir):
    runtime = json.loads((dist_dir / "runtime.json").read_text())
    copy = runtime["packagesCopy"]
    assert len(copy["wheels"]) == len(runtime["preload"]) > 0
    digest, size = hashlib.sha256(), 0
    for entry, wheel in zip(runtime["preload"], copy["wheels"]):
        with zipfile.ZipFile(dist_dir / entry["file"]) as archive:
            names = [info.filename for info in archive.infolist() if not info.filename.endswith("/")]
            assert [path for path, _ in wheel["files"]] == names
            for path, length in wheel["files"]:
                data = archive.read(path)
                assert len(data) == length
                digest.update(data)
                size += length
    assert copy["size"] == size
    assert copy["integrity"] == "sha256-" + base64.b64encode(digest.digest()).decode()
