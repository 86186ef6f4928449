"""The order the suite runs in over pytest-xdist's workers (tests/conftest.py): the longest tests start first."""

from __future__ import annotations

# The longest tests (minutes each, measured with --durations), longest first: WebKit's walk through the deck,
# the two-clone build, then the other engines' walks.
LONGEST_TESTS = ("webkit", "test_two_clones_in_two_environments", "firefox", "chromium")


def rank_longest(item) -> int | None:
    """Where `item` stands in LONGEST_TESTS (None: an ordinary test)."""
    if item.get_closest_marker("engines") is None and LONGEST_TESTS[1] not in item.name:
        return None
    return next(rank for rank, word in enumerate(LONGEST_TESTS) if word in item.name)


def spread_longest_tests(items: list, workers: int) -> list:
    """The tests reordered so that each worker's first share begins with its part of the longest ones.

    pytest-xdist's worksteal hands worker i the contiguous share
    pending[:len(pending) // (workers - i)] of what is left, and later steals
    from the ends of the queues; long tests at the front of each share start
    at once, side by side, instead of one after another or at the end of the run.
    """
    longest = sorted((item for item in items if rank_longest(item) is not None), key=rank_longest)
    if workers < 2 or not longest:
        return items
    rest = [item for item in items if rank_longest(item) is None]
    heads = [longest[worker::workers] for worker in range(workers)]
    ordered, remaining = [], len(items)
    for worker in range(workers):
        share = remaining // (workers - worker)
        remaining -= share
        taken = max(share - len(heads[worker]), 0)
        ordered += heads[worker] + rest[:taken]
        rest = rest[taken:]
    return ordered + rest
