"""Compressed copies made early, in the background, are the ones the build then finds in its cache."""

from __future__ import annotations

import gzip

from deckbuild import compress
from deckbuild.files import hash_file


def test_copies_started_early_are_found_by_the_build_without_compressing_again(tmp_path, monkeypatch):
    source = tmp_path / "grande.js"
    source.write_text("const ruido = laplace(1 / epsilon);\n" * 400, encoding="utf-8")
    cache = tmp_path / "cache"
    compress.start_early_copies([source], cache=cache).result()
    monkeypatch.setenv("PATH", "")   # a copy made again would need node: only a cache hit works
    encoded = compress.write_compressed_copies(tmp_path, {source.name: hash_file(source)}, cache=cache)
    assert set(encoded[source.name]) == set(compress.CODINGS)
    copy = source.with_name(source.name + ".gz")
    assert gzip.decompress(copy.read_bytes()) == source.read_bytes()
    assert encoded[source.name]["gzip"] == hash_file(copy)
