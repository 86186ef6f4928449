"""Pruebas del orden de la batería (tests/suiteorder.py): the longest tests start first, one share of them per worker."""

from __future__ import annotations

from types import SimpleNamespace

from suiteorder import spread_longest_tests


def make_item(name: str, *, engines: bool = False):
    return SimpleNamespace(name=name, get_closest_marker=lambda marker: object() if engines and marker == "engines" else None)


def test_each_worker_s_first_share_begins_with_its_part_of_the_longest_tests():
    ordinary = [make_item(f"test_{index}") for index in range(30)]
    longest = [make_item(f"test_deck_in_engine[{engine}-{mode}]", engines=True)
               for engine in ("chromium", "firefox", "webkit") for mode in ("coop-coep", "sin-aislar")]
    clones = make_item("test_two_clones_in_two_environments_build_the_same_dist")
    items = ordinary[:10] + longest[:3] + ordinary[10:] + [clones] + longest[3:]
    ordered = spread_longest_tests(items, 3)
    assert sorted(item.name for item in ordered) == sorted(item.name for item in items)
    # worksteal's first shares of 37 tests: 12, 12, 13.
    shares = [ordered[:12], ordered[12:24], ordered[24:]]
    heads = [[item.name for item in share if "engine" in item.name or "clones" in item.name] for share in shares]
    # Longest first (WebKit, the clones, Firefox, Chromium; as collected within each), dealt out one per worker in turn.
    assert heads == [["test_deck_in_engine[webkit-coop-coep]", "test_deck_in_engine[firefox-coop-coep]",
                      "test_deck_in_engine[chromium-sin-aislar]"],
                     ["test_deck_in_engine[webkit-sin-aislar]", "test_deck_in_engine[firefox-sin-aislar]"],
                     ["test_two_clones_in_two_environments_build_the_same_dist", "test_deck_in_engine[chromium-coop-coep]"]]
    assert all(share[:len(head)] == [item for item in share if item.name in head] for share, head in zip(shares, heads))
    # The ordinary tests keep their order (a file's fixtures are still set up once per share).
    assert [item for item in ordered if item in ordinary] == ordinary


def test_one_worker_keeps_the_collected_order():
    items = [make_item("test_a"), make_item("test_deck_in_engine[webkit-sin-aislar]", engines=True), make_item("test_b")]
    assert spread_longest_tests(items, 1) == items
