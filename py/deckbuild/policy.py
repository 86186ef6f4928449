"""What the deck may load: its Content-Security-Policy, and the check that keeps slides inside it.

The deck loads everything from its own folder and contacts no other server.
The browser enforces that with one policy, composed here and nowhere else
(`compose_policy`, from the table `POLICY_DIRECTIVES`):

* the page carries it in `<meta http-equiv="Content-Security-Policy">`
  (render fills deck/template.html's `{{ csp }}`), so it holds on any static
  host, with no special headers;
* the page's own inline script (its first-paint script, which starts Python's
  worker before the slides are parsed) is allowed by its hash, never by
  `'unsafe-inline'`: the build hashes exactly the text it inlines;
* the Python worker starts from a `blob:` URL (deck/js/page/workerstart.js): a
  worker from a local-scheme URL takes a copy of its creator's policy
  container (HTML, «run a worker»; CSP3 §4.2), so every request a cell makes
  goes through `connect-src`/`script-src` below, whatever JavaScript it reaches;
* the speaker view, an about:blank window the page opens and fills, inherits it
  too: its one inline script is allowed by hash as well;
* `build.py serve` sends the same policy as a header (deckbuild.server):
  `policy_for_page` composes it with the hashes of the inline scripts of the
  page it serves, which the build checked are only its own.

Slides may hold raw HTML, but `find_remote_loads` (called by the slide reader)
refuses any that would load something from another origin, with file and line,
instead of leaving it to fail silently in the browser.
"""

from __future__ import annotations

import base64
import hashlib
import html.parser
import re
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import urljoin, urlsplit

from .errors import BuildError

# SHA-256 of the inline <script> that reveal.js's notes plugin (5.2.1, pinned in
# pins.py) writes into the speaker view. The build recomputes it from the
# shipped plugin (`check_speaker_view_scripts`) and stops if reveal.js changed it.
SPEAKER_VIEW_SCRIPT_HASHES = ("sha256-wfrJpa7dmlxqHmakgJIolYIQ+LOJmVS3HKfvdaO3GDE=",)

# One source list per directive; anything not named falls back to default-src.
# script-src also gets the hash of each of the page's inline scripts (compose_policy).
POLICY_DIRECTIVES = (
    ("default-src", ("'self'",)),
    # 'wasm-unsafe-eval' compiles Pyodide's WebAssembly; JavaScript's eval stays off.
    ("script-src", ("'self'", "'wasm-unsafe-eval'", *(f"'{digest}'" for digest in SPEAKER_VIEW_SCRIPT_HASHES))),
    # KaTeX positions its glyphs with style attributes; the page's CSS is inline.
    ("style-src", ("'self'", "'unsafe-inline'")),
    # Live figures are blob: URLs of their PNG bytes.
    ("img-src", ("'self'", "blob:", "data:")),
    ("font-src", ("'self'", "data:")),
    ("connect-src", ("'self'",)),
    # The Python worker starts from a blob: URL so that it inherits this policy.
    ("worker-src", ("'self'", "blob:")),
    # The speaker view shows the deck itself in its frames.
    ("frame-src", ("'self'",)),
    ("object-src", ("'none'",)),
    ("base-uri", ("'self'",)),
    ("form-action", ("'none'",)),
)


def compose_policy(*, inline_scripts: Iterable[str] = ()) -> str:
    """The deck's Content-Security-Policy, with each of `inline_scripts` (the page's own) allowed by hash."""
    extra = {"script-src": tuple(f"'{hash_script(script)}'" for script in inline_scripts)}
    return "; ".join(f"{name} {' '.join((*sources, *extra.get(name, ())))}" for name, sources in POLICY_DIRECTIVES)


NOTES_PLUGIN = "vendor/reveal/plugin/notes/notes.js"


# --------------------------------------------------------------------------- inline scripts


def hash_script(text: str) -> str:
    """The CSP source for one inline script: 'sha256-' and the base64 digest of its UTF-8 text."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "sha256-" + base64.b64encode(digest).decode("ascii")


def decode_js_string(source: str, start: int) -> tuple[str, int]:
    """The value of the JavaScript string literal opening at source[start]; and the index after it."""
    quote = source[start]
    if quote not in "\"'":
        raise ValueError(f"no hay una cadena en la posición {start}")
    simple = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}
    out, index = [], start + 1
    while index < len(source):
        char = source[index]
        if char == quote:
            return "".join(out), index + 1
        if char != "\\":
            out.append(char)
            index += 1
            continue
        escape = source[index + 1]
        if escape == "x":
            out.append(chr(int(source[index + 2:index + 4], 16)))
            index += 4
        elif escape == "u" and source[index + 2] == "{":
            end = source.index("}", index)
            out.append(chr(int(source[index + 3:end], 16)))
            index = end + 1
        elif escape == "u":
            out.append(chr(int(source[index + 2:index + 6], 16)))
            index += 6
        elif escape == "\n":
            index += 2  # a line continuation adds nothing
        else:
            out.append(simple.get(escape, escape))
            index += 2
    raise ValueError("cadena sin cerrar")


def extract_speaker_view_scripts(notes_js: str) -> list[str]:
    """The inline scripts of the HTML that reveal's notes plugin document.write()s into the speaker view."""
    call = notes_js.find("document.write(")
    if call < 0:
        raise ValueError("el complemento de notas ya no escribe la vista con document.write")
    page, _ = decode_js_string(notes_js, call + len("document.write("))
    return re.findall(r"<script>(.*?)</script>", page, flags=re.S | re.I)


def check_speaker_view_scripts(out: Path) -> None:
    """The speaker view's inline scripts are the ones the policy allows by hash (SPEAKER_VIEW_SCRIPT_HASHES)."""
    plugin = out / NOTES_PLUGIN
    try:
        scripts = extract_speaker_view_scripts(plugin.read_text(encoding="utf-8"))
    except (OSError, ValueError, IndexError) as error:
        raise BuildError(f"{NOTES_PLUGIN}: no se pudo leer el guion de la vista del presentador ({error})") from None
    found = tuple(hash_script(script) for script in scripts)
    if found != SPEAKER_VIEW_SCRIPT_HASHES:
        raise BuildError(f"{NOTES_PLUGIN}: la vista del presentador trae otros guiones en línea; la política "
                         f"de la página no los dejaría ejecutarse. Pon en SPEAKER_VIEW_SCRIPT_HASHES "
                         f"(py/deckbuild/policy.py): {found}")


class InlineScriptFinder(html.parser.HTMLParser):
    """The text of every <script> without src in a page, in order."""

    def __init__(self):
        super().__init__(convert_charrefs=False)
        self.scripts: list[str] = []
        self.current: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "script" and not any(name == "src" for name, _ in attrs):
            self.current = []

    def handle_data(self, data):
        if self.current is not None:
            self.current.append(data)

    def handle_endtag(self, tag):
        if tag == "script" and self.current is not None:
            self.scripts.append("".join(self.current))
            self.current = None


def find_inline_scripts(page: str) -> list[str]:
    """The inline scripts of a page (the text between <script> and </script>, as the browser hashes it)."""
    finder = InlineScriptFinder()
    finder.feed(page)
    finder.close()
    return finder.scripts


def policy_for_page(page: str) -> str:
    """The policy for a built page: the deck's, with the page's own inline scripts allowed by hash.

    The build checks (`check_page_scripts`) that a page holds no inline script
    but the ones it wrote, so this is the policy in the page's own <meta>.
    """
    return compose_policy(inline_scripts=find_inline_scripts(page))


def check_page_scripts(page: str, written: list[str]) -> None:
    """The page's inline scripts are exactly the ones the build wrote (`written`), in order."""
    found = find_inline_scripts(page)
    if found != written:
        raise BuildError(f"deck/template.html: la página tiene {len(found)} guiones en línea y la construcción "
                         f"escribió {len(written)}; la política solo admite por su huella los que escribe ella")


# --------------------------------------------------------------------------- slides' raw HTML

# A stand-in for wherever the deck is served: a URL that resolves elsewhere is another origin.
DECK_ORIGIN = "https://mazo.invalid"
DECK_BASE = f"{DECK_ORIGIN}/presentacion/"
# Attributes whose URL the browser fetches (or runs) by itself, on any element.
LOADING_ATTRIBUTES = ("src", "href", "xlink:href", "data", "poster", "background", "action", "formaction",
                      "codebase", "archive", "manifest", "ping", "lowsrc", "dynsrc", "icon")
SRCSET_ATTRIBUTES = ("srcset", "imagesrcset")
# Only these elements may point elsewhere: following a link is the reader's choice, not a load.
LINK_ELEMENTS = ("a", "area")
CSS_URL = re.compile(r"""url\(\s*(?:"([^"]*)"|'([^']*)'|([^)\s]*))\s*\)""", re.I)
CSS_IMPORT = re.compile(r"""@import\s+(?:"([^"]*)"|'([^']*)')""", re.I)
CSS_IMAGE_SET = re.compile(r"""image-set\(([^)]*)\)""", re.I)
CSS_STRING = re.compile(r"""(?:"([^"]*)"|'([^']*)')""")
EVENT_ATTRIBUTE = re.compile(r"on[a-z]+")


def normalize_url(url: str) -> str:
    """The URL as a browser reads it: tabs and newlines removed, outer spaces dropped, \\ as /."""
    return re.sub(r"[\t\n\r]", "", url).strip("\x00 \f").replace("\\", "/")


def describe_remote(url: str) -> str | None:
    """Why a slide may not load `url` (another origin, or JavaScript), or None if it stays in the deck's folder."""
    cleaned = normalize_url(url)
    if not cleaned or cleaned.startswith("#") or cleaned.lower().startswith("data:"):
        return None
    has_scheme = re.match(r"[a-zA-Z][a-zA-Z0-9+.-]*:", cleaned) is not None
    if has_scheme and urlsplit(cleaned).scheme.lower() == "javascript":
        return f"«{cleaned}», que es código JavaScript (la política de la página no lo ejecuta)"
    resolved = urlsplit(urljoin(DECK_BASE, cleaned))
    origin = f"{resolved.scheme}://{resolved.netloc}"
    if has_scheme or origin != DECK_ORIGIN:
        return f"«{cleaned}», que es de otro origen"
    return None


def find_css_urls(css: str) -> list[tuple[int, str]]:
    """Every URL a piece of CSS loads (url(), @import, image-set()), with its offset in `css`."""
    urls = [(match.start(), next(group for group in match.groups() if group is not None))
            for match in CSS_URL.finditer(css)]
    urls += [(match.start(), match.group(1) or match.group(2) or "") for match in CSS_IMPORT.finditer(css)]
    for match in CSS_IMAGE_SET.finditer(css):
        urls += [(match.start() + string.start(), string.group(1) or string.group(2) or "")
                 for string in CSS_STRING.finditer(match.group(1))]
    return sorted(urls)


def find_remote_css(css: str, what: str) -> list[tuple[int, str]]:
    """(line within `css`, why) for every URL of another origin the CSS loads."""
    return [(css.count("\n", 0, offset), f"{what} carga {reason}")
            for offset, url in find_css_urls(css) if (reason := describe_remote(url))]


class RemoteLoadFinder(html.parser.HTMLParser):
    """Collects, with the line where each starts, what a piece of slide HTML would load from elsewhere."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.problems: list[tuple[int, str]] = []
        self.raw_element: str | None = None

    def report(self, message: str, lines_after: int = 0) -> None:
        self.problems.append((self.getpos()[0] + lines_after, message))

    def handle_starttag(self, tag, attrs):
        self.check_element(tag, attrs)
        if tag in ("style", "script"):
            self.raw_element = tag

    def handle_startendtag(self, tag, attrs):
        self.check_element(tag, attrs)

    def handle_endtag(self, tag):
        if tag == self.raw_element:
            self.raw_element = None

    def handle_data(self, data):
        if self.raw_element == "style":
            for lines_after, problem in find_remote_css(data, "la hoja de estilo <style>"):
                self.report(problem, lines_after)
        elif self.raw_element == "script" and data.strip():
            self.report("un <script> escrito en la diapositiva no se ejecutaría: la política de la página "
                        "solo admite guiones en archivos de la carpeta del mazo")

    def check_element(self, tag, attrs):
        if tag == "base":
            self.report("<base> cambiaría de dónde carga el mazo todos sus archivos")
        for name, value in attrs:
            self.check_attribute(tag, name.lower(), value or "")

    def check_attribute(self, tag: str, name: str, value: str) -> None:
        if EVENT_ATTRIBUTE.fullmatch(name):
            self.report(f"<{tag} {name}=…> no se ejecutaría: la política de la página no admite "
                        "JavaScript en atributos")
        elif name == "style":
            for _, problem in find_remote_css(value, f"el estilo de <{tag}>"):
                self.report(problem)
        elif name in SRCSET_ATTRIBUTES:
            for candidate in value.split(","):
                words = candidate.split()
                if words and (reason := describe_remote(words[0])):
                    self.report(f"<{tag} {name}> carga {reason}")
        elif name in LOADING_ATTRIBUTES:
            reason = describe_remote(value)
            if reason is None:
                return
            if name in ("href", "xlink:href") and tag in LINK_ELEMENTS:
                # Following a link is the reader's choice, not a load; only javascript: is refused.
                if "JavaScript" in reason:
                    self.report(f"<{tag} {name}> lleva a {reason}")
                return
            self.report(f"<{tag} {name}> carga {reason}")
        elif tag == "meta" and name == "http-equiv" and value.strip().lower() == "refresh":
            self.report('<meta http-equiv="refresh"> llevaría a otra página')
        elif tag == "iframe" and name == "srcdoc":
            for _, message in find_remote_loads(value):
                self.report(f"<iframe srcdoc>: {message}")


def find_remote_loads(fragment: str) -> list[tuple[int, str]]:
    """What a piece of slide HTML would load from another origin: (line within the fragment, why).

    Raw HTML in slides is allowed, but the page's policy blocks anything that
    comes from another origin (and any inline script): the build says so
    instead of letting the slide break in front of the class. Links (`<a
    href>`) may point anywhere.
    """
    finder = RemoteLoadFinder()
    finder.feed(fragment)
    finder.close()
    return finder.problems
