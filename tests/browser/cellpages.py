"""Helpers shared by the live-cell browser tests and their fixtures."""

from __future__ import annotations

BOOT_TIMEOUT_MS = 120_000


def open_recording_page(browser, url: str, *, viewport=(1280, 720)):
    """A fresh context and page that record request URLs and console errors."""
    context = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]})
    page = context.new_page()
    page.requests = []
    page.console_errors = []
    context.on("request", lambda request: page.requests.append(request.url))
    page.on("console", lambda message: page.console_errors.append(message.text)
            if message.type == "error" else None)
    page.on("pageerror", lambda error: page.console_errors.append(str(error)))
    page.warnings = []
    page.on("console", lambda message: page.warnings.append(message.text) if message.type == "warning" else None)
    page.goto(url)
    return context, page


def wait_until_ready(page, timeout_ms: int = BOOT_TIMEOUT_MS):
    page.wait_for_selector("html[data-cells=ready]", timeout=30_000)
    page.wait_for_selector("html[data-python=ready]", timeout=timeout_ms)
