"""Helpers shared by the live-cell browser tests and their fixtures."""

from __future__ import annotations

BOOT_TIMEOUT_MS = 120_000


def wait_until_ready(page, timeout_ms: int = BOOT_TIMEOUT_MS):
    page.wait_for_selector("html[data-cells=ready]", timeout=30_000)
    page.wait_for_selector("html[data-python=ready]", timeout=timeout_ms)
