"""The channel on which a class follows its lecturer: one slide position, many listeners, one key that may change it.

Stage: part of `build.py serve` on a network (deckbuild.serve makes the
channel; `make_server(follow=channel)` adds `FollowRoutes` to the server's
request handler). Two paths of the deck's folder, whose names and bounds are
the contract's, `dpdeck.classroom.protocol.FOLLOW`:

* `GET dpdeck-follow/events`: a server-sent-events stream (text/event-stream).
  It opens with `retry:` (how long a browser waits before reconnecting) and
  the lecturer's latest slide, then sends each new one as
  `event: slide` / `data: {"h": 3, "v": 0, "f": -1, "seq": 12}`, and a comment
  line every `heartbeatSeconds` so that a dead connection is noticed. Past
  `maxFollowers` listeners the answer is 503.
* `GET dpdeck-follow/publish?h=3&v=0&f=-1` with the lecturer's key in the
  `X-Dpdeck-Key` header: the new slide; answers `{"followers": N}`. Without
  the key (or with another) 403, and nothing changes; indices that are not
  whole numbers within `maxSlideIndex` get 400. A HEAD request is answered as
  a GET would be, and moves nothing.

Every answer of a server with a channel (files and errors too) carries the
`X-Dpdeck-Follow` header: that is how a page knows it may offer «Seguir al
profesor». A server without one has neither route and never sends it.

Only the latest slide is kept: a listener that falls behind jumps to it, so
no queue grows, whatever the number of listeners or of slides published. The
key is made by `new_key()` when the server starts (and printed in the
lecturer's address); it is compared in constant time. Every listener of one
server is served by one asyncio event loop: publishing (from any thread) wakes
them all with one call onto that loop. The server stops a stream the moment
its client closes the connection (deckbuild.server), so a student who leaves
frees a place at once.

Standard library only, like deckbuild.server.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import re
import secrets
import threading
import urllib.parse
from http import HTTPStatus

from dpdeck.classroom.protocol import FOLLOW

__all__ = ["FollowChannel", "FollowRoutes", "Listener", "SlideError", "add_follow_routes", "new_key", "parse_slide",
           "EVENTS_PATH", "PUBLISH_PATH"]

EVENTS_PATH = "/" + FOLLOW["events"]
PUBLISH_PATH = "/" + FOLLOW["publish"]
KEY_BYTES = 18
SLIDE_FIELDS = (("h", 0), ("v", 0), ("f", -1))
MAX_QUERY_FIELDS = len(SLIDE_FIELDS) + 2
# A whole number as the page writes one: ASCII digits, no sign but a leading minus, no leading zeros.
WHOLE_NUMBER = re.compile(r"0|-?[1-9][0-9]{0,%d}" % (len(str(FOLLOW["maxSlideIndex"])) - 1))
HEARTBEAT = b": sigue\n\n"   # an SSE comment: the browser ignores it, a dead connection shows on writing it
REFUSED_TEXT = "solo el mazo del profesor, con su clave, puede cambiar la diapositiva"
FULL_TEXT = "ya siguen al profesor {count} personas, el máximo: inténtalo dentro de un rato"


class SlideError(ValueError):
    """A publish request whose slide position is not one (Spanish)."""


def new_key() -> str:
    """A fresh secret for the lecturer's address: 24 URL-safe characters (144 random bits)."""
    return secrets.token_urlsafe(KEY_BYTES)


def parse_slide(query: str) -> dict[str, int]:
    """`h=3&v=0&f=-1` → {"h": 3, "v": 0, "f": -1}; SlideError if a field is missing or out of bounds."""
    try:
        fields = urllib.parse.parse_qs(query, keep_blank_values=True, max_num_fields=MAX_QUERY_FIELDS)
    except ValueError:   # more fields than a slide has, and then some
        raise SlideError(f"la petición lleva más de {MAX_QUERY_FIELDS} campos") from None
    slide = {}
    for name, lowest in SLIDE_FIELDS:
        values = fields.get(name, [])
        text = values[0] if len(values) == 1 else ""
        if not WHOLE_NUMBER.fullmatch(text):
            raise SlideError(f"«{name}» tiene que ser un número entero")
        value = int(text)
        if not lowest <= value <= FOLLOW["maxSlideIndex"]:
            raise SlideError(f"«{name}» = {value} está fuera de {lowest}…{FOLLOW['maxSlideIndex']}")
        slide[name] = value
    return slide


class FollowChannel:
    """The lecturer's latest slide and the listeners that follow it (see the module)."""

    def __init__(self, key: str, *, max_followers: int = FOLLOW["maxFollowers"],
                 heartbeat_seconds: float = FOLLOW["heartbeatSeconds"], retry_ms: int = FOLLOW["retryMs"]):
        if not key:
            raise ValueError("la clave del profesor no puede estar vacía")
        self._key = key.encode("utf-8")
        self.max_followers = max_followers
        self.heartbeat_seconds = heartbeat_seconds
        self.retry_ms = retry_ms
        self._lock = threading.Lock()
        self._followers = 0
        self._sequence = 0
        self._event = b""                      # the latest slide as an SSE event, b"" before any
        self._loop: asyncio.AbstractEventLoop | None = None
        self._changed: asyncio.Event | None = None   # set (then replaced) on the loop at each publish
        self.published = 0

    def accepts(self, key: str | None) -> bool:
        """Whether `key` is the lecturer's (compared in constant time)."""
        return key is not None and hmac.compare_digest(key.encode("utf-8", "surrogateescape"), self._key)

    @property
    def followers(self) -> int:
        with self._lock:
            return self._followers

    def publish(self, slide: dict[str, int]) -> int:
        """The lecturer's new slide, from any thread; returns how many listen."""
        with self._lock:
            self._sequence += 1
            self.published += 1
            data = json.dumps({**slide, "seq": self._sequence}, separators=(",", ":"))
            self._event = f"event: {FOLLOW['event']}\ndata: {data}\n\n".encode()
            loop, followers = self._loop, self._followers
        if loop is not None:
            try:
                loop.call_soon_threadsafe(self._wake)
            except RuntimeError:   # the loop has closed: no one to wake
                pass
        return followers

    def listen(self) -> Listener | None:
        """A new listener, or None when `max_followers` already listen."""
        with self._lock:
            if self._followers >= self.max_followers:
                return None
            self._followers += 1
        return Listener(self)

    def _leave(self) -> None:
        with self._lock:
            self._followers -= 1

    def _wake(self) -> None:
        """On the loop: every listener waiting on the current event wakes; later ones wait on a new one."""
        if self._changed is not None:
            changed, self._changed = self._changed, asyncio.Event()
            changed.set()

    def _latest(self) -> tuple[int, bytes]:
        with self._lock:
            return self._sequence, self._event

    def _attach(self) -> asyncio.Event:
        """The loop's event to wait on (made on the listeners' loop; anew if a new loop serves them)."""
        loop = asyncio.get_running_loop()
        if self._changed is None or self._loop is not loop:
            with self._lock:
                self._loop = loop
            self._changed = asyncio.Event()
        return self._changed


class Listener:
    """One listener's stream: an async iterator of the bytes to send; `close()` when the connection ends."""

    def __init__(self, channel: FollowChannel):
        self.channel = channel
        self.seen = -1
        self.closed = False

    def __aiter__(self):
        return self

    async def __anext__(self) -> bytes:
        if self.closed:
            raise StopAsyncIteration
        channel = self.channel
        changed = channel._attach()
        sequence, event = channel._latest()
        if self.seen < 0:
            self.seen = sequence
            return f"retry: {channel.retry_ms}\n\n".encode() + event
        if sequence == self.seen:
            try:
                await asyncio.wait_for(changed.wait(), channel.heartbeat_seconds)
            except TimeoutError:
                return HEARTBEAT
            sequence, event = channel._latest()
        self.seen = sequence
        return event

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.channel._leave()


class FollowRoutes:
    """The channel's two routes and header, for deckbuild.server's request handler (`add_follow_routes`).

    Each method answers as the handler's own routes do: the head into
    `self.wfile`, a stream left in `self.body` for the server's loop.
    """

    channel: FollowChannel
    FOLLOW_ROUTES = {EVENTS_PATH: "send_follow_events", PUBLISH_PATH: "send_follow_publish"}

    def end_headers(self):
        self.send_header(FOLLOW["availableHeader"], "1")
        super().end_headers()

    def send_follow_events(self) -> None:
        """`GET dpdeck-follow/events`: the stream (one place of `maxFollowers`), or 503 when they are all taken."""
        listener = None
        if self.command != "HEAD":
            listener = self.channel.listen()
            if listener is None:
                full = FULL_TEXT.format(count=self.channel.max_followers)
                self.send_error(HTTPStatus.SERVICE_UNAVAILABLE, explain=full)
                return
        self._content_type = "text/event-stream"
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        # No length: the stream lasts as long as the connection, which carries nothing else.
        self.send_header("Connection", "close")
        self.close_connection = True
        self.end_headers()
        self.body = listener

    def send_follow_publish(self) -> None:
        """`GET dpdeck-follow/publish?h=…&v=…&f=…` with the key: the new slide and `{"followers": N}`; 403, 400."""
        if not self.channel.accepts(self.headers.get(FOLLOW["keyHeader"])):
            self.send_error(HTTPStatus.FORBIDDEN, explain=REFUSED_TEXT)
            return
        try:
            slide = parse_slide(urllib.parse.urlsplit(self.path).query)
        except SlideError as error:
            self.send_error(HTTPStatus.BAD_REQUEST, explain=str(error))
            return
        followers = self.channel.publish(slide) if self.command == "GET" else self.channel.followers
        answer = json.dumps({"followers": followers}).encode()
        self._content_type = "application/json"
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        if self.command == "GET":
            self.wfile.write(answer)


def add_follow_routes(handler_class: type, channel: FollowChannel) -> type:
    """`handler_class` with the channel's routes, and its header on every answer."""
    routes = {**handler_class.ROUTES, **FollowRoutes.FOLLOW_ROUTES}
    return type("FollowingHandler", (FollowRoutes, handler_class), {"channel": channel, "ROUTES": routes})
