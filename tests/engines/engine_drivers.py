"""One small driver per engine, all with the same few verbs, so the checks are written once.

* Chromium (Debian's, or Playwright's own): Playwright, the driver of tests/browser.
* Firefox ESR (Debian's): puppeteer-core over WebDriver BiDi, which Firefox has built in;
  firefox_bridge.mjs runs it in node and takes one JSON command per line.
* WebKit: WebKitGTK's MiniBrowser (Debian's libwebkit2gtk-4.1-0), driven by
  WebKitWebDriver through Selenium, in an Xvfb screen of its own (WebKitGTK has no
  headless mode).

The verbs: `open(url)`, `evaluate(function, arg)` (a JavaScript function's source,
called with `arg`; a promise it returns is awaited; the value comes back as JSON),
`click(selector)` and `press(*keys)`/`type(text)` (real input events: keys are
named as in the DOM's KeyboardEvent.key, a chord as "Control+End"),
`screenshot()` (PNG bytes), `take_errors()` (the console errors and uncaught
exceptions seen since the last call, where the engine reports them) and
`close()`. Anything an engine answers with an error becomes a DriverError.
"""

from __future__ import annotations

import base64
import json
import os
import selectors
import signal
import subprocess
import time
from pathlib import Path

from deckbuild.browser import FIREFOX_ESR, WEBKIT_DRIVER, find_minibrowser, start_xvfb, webkit_environment

ENGINES = ("webkit", "firefox", "chromium")   # the slowest first: xdist starts them first
VIEWPORT = (1280, 720)
COMMAND_SECONDS = 60   # one verb; waits are polls of quick ones (engine_deck.py)
START_SECONDS = 90     # a browser starting on a busy 2-core machine
BRIDGE = Path(__file__).with_name("firefox_bridge.mjs")


class DriverError(Exception):
    """An engine could not do what it was asked (a page that is navigating, a missing element…)."""


def call_expression(function: str, arg) -> str:
    """`(function)(arg)` as one expression, with `arg` as a JSON literal."""
    return f"({function})({json.dumps(arg)})"


class PlaywrightChromium:
    """Chromium through Playwright: a fresh context (profile) of the session's browser."""

    engine = "chromium"

    def __init__(self, browser):
        from playwright.sync_api import Error

        self.error_type = Error
        self.version = browser.version
        self.context = browser.new_context(viewport={"width": VIEWPORT[0], "height": VIEWPORT[1]})
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.page.on("console", lambda message: self.errors.append(message.text) if message.type == "error" else None)
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))

    def attempt(self, action):
        try:
            return action()
        except self.error_type as error:
            raise DriverError(str(error).splitlines()[0]) from None

    def open(self, url: str) -> None:
        self.attempt(lambda: self.page.goto(url))

    def evaluate(self, function: str, arg=None):
        return self.attempt(lambda: self.page.evaluate(function, arg))

    def click(self, selector: str) -> None:
        self.attempt(lambda: self.page.click(selector, timeout=COMMAND_SECONDS * 1000))

    def press(self, *keys: str) -> None:
        for key in keys:
            self.attempt(lambda key=key: self.page.keyboard.press(key))

    def type(self, text: str) -> None:
        self.attempt(lambda: self.page.keyboard.type(text))

    def screenshot(self) -> bytes:
        return self.attempt(lambda: self.page.screenshot())

    def take_errors(self) -> list[str]:
        taken, self.errors = self.errors, []
        return taken

    def close(self) -> None:
        self.context.close()


class PuppeteerFirefox:
    """Firefox ESR through puppeteer-core over WebDriver BiDi, in node (firefox_bridge.mjs)."""

    engine = "firefox"

    def __init__(self, root: Path):
        # node runs with nothing of the caller's environment but what it needs to find programs
        # and a place for the temporary profile: no NODE_OPTIONS or NODE_PATH loads other code.
        environment = {name: os.environ[name] for name in ("PATH", "HOME", "TMPDIR") if name in os.environ}
        self.process = subprocess.Popen(
            ["node", str(BRIDGE), str(FIREFOX_ESR), str(VIEWPORT[0]), str(VIEWPORT[1])],
            cwd=root, env={**environment, "LANG": "C.UTF-8"}, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, encoding="utf-8", bufsize=1)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.process.stdout, selectors.EVENT_READ)
        self.browser_pid = None
        self.next_id = 0
        try:
            hello = self.read_line(START_SECONDS)
        except DriverError:
            self.close()
            raise
        self.version = hello["version"]
        self.browser_pid = hello.get("pid")

    def stop_browser(self) -> None:
        """The Firefox this bridge started, if it outlived node (its id, checked to still be that Firefox)."""
        if not self.browser_pid:
            return
        try:
            if b"firefox" in Path(f"/proc/{self.browser_pid}/cmdline").read_bytes():
                os.kill(self.browser_pid, signal.SIGKILL)
        except (OSError, ProcessLookupError):
            pass

    def read_line(self, seconds: float) -> dict:
        deadline = time.monotonic() + seconds
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise DriverError(f"Firefox no respondió en {seconds:.0f} s")
            if self.selector.select(remaining):
                line = self.process.stdout.readline()
                if not line:
                    detail = self.process.stderr.read()[-2000:] if self.process.poll() is not None else ""
                    raise DriverError(f"el proceso de Firefox (node) terminó: {detail.strip()}")
                return json.loads(line)

    def send(self, verb: str, seconds: float = COMMAND_SECONDS, **args):
        self.next_id += 1
        self.process.stdin.write(json.dumps({"id": self.next_id, "verb": verb, "args": args}) + "\n")
        self.process.stdin.flush()
        answer = self.read_line(seconds)
        if answer.get("id") != self.next_id:
            raise DriverError(f"respuesta fuera de orden de Firefox: {answer}")
        if not answer["ok"]:
            raise DriverError(answer["error"].splitlines()[0])
        return answer["value"]

    def open(self, url: str) -> None:
        self.send("open", url=url)

    def evaluate(self, function: str, arg=None):
        return self.send("evaluate", expression=call_expression(function, arg))

    def click(self, selector: str) -> None:
        self.send("click", selector=selector)

    def press(self, *keys: str) -> None:
        self.send("press", keys=list(keys))

    def type(self, text: str) -> None:
        self.send("type", text=text)

    def screenshot(self) -> bytes:
        return base64.b64decode(self.send("screenshot"))

    def take_errors(self) -> list[str]:
        return self.send("errors")

    def close(self) -> None:
        """Closes Firefox through puppeteer; if node does not end by itself, node and its Firefox are stopped by id."""
        if self.process.poll() is None:
            try:
                self.process.stdin.close()
                self.process.wait(timeout=20)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait()
                self.stop_browser()
        self.selector.close()
        for stream in (self.process.stdout, self.process.stderr):
            stream.close()


# DOM key names → Selenium's key codes (the ones the checks use).
SELENIUM_KEYS = {"ArrowRight": "\ue014", "ArrowLeft": "\ue012", "Enter": "\ue007", "End": "\ue010",
                 "Home": "\ue011", "Escape": "\ue00c", "Control": "\ue009", "Shift": "\ue008"}

# WebDriver runs a script as a function body: it calls the function and hands back what
# its promise settles to (an error as a value, so that it keeps its message).
SELENIUM_CALL = """
const done = arguments[arguments.length - 1];
Promise.resolve().then(() => (%s)(arguments[0])).then(
  (value) => done({ok: true, value: value === undefined ? null : value}),
  (error) => done({ok: false, error: String(error && error.message || error)}));
"""


class SeleniumWebKit:
    """WebKitGTK's MiniBrowser through WebKitWebDriver (Selenium), in an Xvfb screen of its own."""

    engine = "webkit"

    def __init__(self):
        from selenium import webdriver
        from selenium.common.exceptions import WebDriverException
        from selenium.webdriver.common.action_chains import ActionChains
        from selenium.webdriver.common.by import By
        from selenium.webdriver.webkitgtk.options import Options
        from selenium.webdriver.webkitgtk.service import Service

        self.error_type = WebDriverException
        self.actions = ActionChains
        self.by = By
        self.xvfb, display = start_xvfb()
        self.driver = None
        try:
            options = Options()
            options.binary_location = str(find_minibrowser())
            options.add_argument("--automation")
            service = Service(executable_path=str(WEBKIT_DRIVER), env=webkit_environment(display))
            self.driver = webdriver.WebKitGTK(options=options, service=service)
            self.driver.set_window_rect(0, 0, VIEWPORT[0], VIEWPORT[1])
            self.driver.set_script_timeout(COMMAND_SECONDS)
            self.version = self.driver.capabilities.get("browserVersion", "?")
        except BaseException:
            self.close()
            raise

    def attempt(self, action):
        try:
            return action()
        except self.error_type as error:
            raise DriverError((error.msg or type(error).__name__).splitlines()[0]) from None

    def open(self, url: str) -> None:
        self.attempt(lambda: self.driver.get(url))

    def evaluate(self, function: str, arg=None):
        answer = self.attempt(lambda: self.driver.execute_async_script(SELENIUM_CALL % function, arg))
        if not isinstance(answer, dict) or not answer.get("ok"):
            raise DriverError(str(answer.get("error") if isinstance(answer, dict) else answer))
        return answer["value"]

    def click(self, selector: str) -> None:
        self.attempt(lambda: self.driver.find_element(self.by.CSS_SELECTOR, selector).click())

    def press(self, *keys: str) -> None:
        chain = self.actions(self.driver)
        for key in keys:
            *modifiers, last = key.split("+")
            for modifier in modifiers:
                chain = chain.key_down(SELENIUM_KEYS[modifier])
            chain = chain.send_keys(SELENIUM_KEYS.get(last, last))
            for modifier in reversed(modifiers):
                chain = chain.key_up(SELENIUM_KEYS[modifier])
        self.attempt(chain.perform)

    def type(self, text: str) -> None:
        self.attempt(self.actions(self.driver).send_keys(text).perform)

    def screenshot(self) -> bytes:
        return self.attempt(self.driver.get_screenshot_as_png)

    def take_errors(self) -> list[str]:
        # WebKitWebDriver has no log endpoint and MiniBrowser prints no console in automation.
        return []

    def close(self) -> None:
        if self.driver is not None:
            try:
                self.driver.quit()
            except Exception:   # a browser that already died: its service is stopped all the same
                pass
        self.xvfb.terminate()
        try:
            self.xvfb.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.xvfb.kill()
            self.xvfb.wait()


def open_driver(engine: str, *, root: Path, chromium_browser=None):
    """A fresh profile of `engine` with one page, ready for `open`."""
    if engine == "chromium":
        return PlaywrightChromium(chromium_browser)
    if engine == "firefox":
        return PuppeteerFirefox(root)
    if engine == "webkit":
        return SeleniumWebKit()
    raise ValueError(f"motor desconocido: {engine}")

