"""Following the lecturer: deckbuild.follow's channel, and `build.py serve`'s two routes for it.

* The channel keeps only the lecturer's latest slide: a listener gets it at
  once, then each change; a listener that falls behind jumps to the latest (no
  queue grows); a quiet channel sends a heartbeat; listeners are capped.
* Only the key publishes: without it (or with another, or in the query instead
  of the header) the server answers 403 and nothing moves; a slide that is not
  whole numbers within bounds is 400; a server without a channel has neither
  route, and never says it offers one.
* 60 students on one laptop: 60 event streams on loopback follow 30 slide
  changes; every stream sees every change's final slide, in order, and the
  time from publishing to the last stream's reading it is printed (median,
  95th percentile, worst). Wall-clock is printed, never asserted.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import http.client
import json
import socket
import statistics
import threading
import time

import pytest

from deckbuild.follow import EVENTS_PATH, PUBLISH_PATH, FollowChannel, SlideError, new_key, parse_slide
from dpdeck.classroom.protocol import FOLLOW


def run_alone(coroutine):
    """asyncio.run in a thread of its own (a browser test earlier in this worker leaves Playwright's loop running here)."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


# ------------------------------------------------------------------ the channel


def test_a_slide_is_three_whole_numbers_within_bounds():
    assert parse_slide("h=3&v=0&f=-1") == {"h": 3, "v": 0, "f": -1}
    top = FOLLOW["maxSlideIndex"]
    assert parse_slide(f"h={top}&v=0&f={top}&seq=7") == {"h": top, "v": 0, "f": top}
    for bad in ("h=3&v=0", "h=a&v=0&f=0", "h=3&v=0&f=-2", f"h={FOLLOW['maxSlideIndex'] + 1}&v=0&f=0",
                "h=1&h=2&v=0&f=0", "h=1.5&v=0&f=0", "h=%C2%B2&v=0&f=0", "h=0000001&v=0&f=0",
                "h=--1&v=0&f=0", "h=-0&v=0&f=0", "h=+1&v=0&f=0", "h=01&v=0&f=0", "h=1&v=0&f=0&a=1&b=2&c=3",
                "h=" + "9" * 400 + "&v=0&f=0"):
        with pytest.raises(SlideError):
            parse_slide(bad)


def test_only_the_key_is_accepted():
    key = new_key()
    assert len(key) >= 24 and key != new_key()
    channel = FollowChannel(key)
    assert channel.accepts(key)
    assert not channel.accepts(None) and not channel.accepts("") and not channel.accepts(key + "x")
    with pytest.raises(ValueError):
        FollowChannel("")


def collect(listener, count: int, timeout: float = 5.0) -> list[bytes]:
    async def read():
        return [await asyncio.wait_for(listener.__anext__(), timeout) for _ in range(count)]
    return run_alone(read())


def test_a_listener_gets_the_latest_slide_then_each_change_and_a_heartbeat_when_quiet():
    channel = FollowChannel("clave", heartbeat_seconds=0.2)
    channel.publish({"h": 1, "v": 0, "f": -1})

    async def scenario():
        listener = channel.listen()
        first = await listener.__anext__()
        # Two changes while it was not reading: it skips to the latest.
        channel.publish({"h": 2, "v": 0, "f": -1})
        channel.publish({"h": 3, "v": 0, "f": 0})
        behind = await asyncio.wait_for(listener.__anext__(), 5)
        # A change published from another thread while it waits wakes it.
        loop = asyncio.get_running_loop()
        loop.call_later(0.05, lambda: threading.Thread(target=channel.publish, args=({"h": 4, "v": 1, "f": 2},)).start())
        woken = await asyncio.wait_for(listener.__anext__(), 5)
        quiet = await asyncio.wait_for(listener.__anext__(), 5)
        listener.close()
        return first, behind, woken, quiet

    first, behind, woken, quiet = run_alone(scenario())
    assert first.startswith(f"retry: {FOLLOW['retryMs']}\n\n".encode())
    assert b'event: slide\ndata: {"h":1,"v":0,"f":-1,"seq":1}\n\n' in first
    assert behind == b'event: slide\ndata: {"h":3,"v":0,"f":0,"seq":3}\n\n'
    assert woken == b'event: slide\ndata: {"h":4,"v":1,"f":2,"seq":4}\n\n'
    assert quiet.startswith(b":")
    assert channel.followers == 0


def test_listeners_are_capped_and_leaving_frees_a_place():
    channel = FollowChannel("clave", max_followers=2)
    first, second = channel.listen(), channel.listen()
    assert channel.listen() is None and channel.followers == 2
    first.close()
    first.close()   # twice is once
    assert channel.followers == 1 and channel.listen() is not None
    second.close()


def test_a_channel_serves_listeners_of_a_new_loop():
    channel = FollowChannel("clave")
    channel.publish({"h": 1, "v": 0, "f": -1})
    for _ in range(2):   # a server that stops and starts again serves the same channel from a new loop
        listener = channel.listen()
        first = collect(listener, 1)[0]
        assert first.startswith(b"retry: ") and b'"h":1,' in first

        async def wake():
            asyncio.get_running_loop().call_later(0.05, channel.publish, {"h": 2, "v": 0, "f": -1})
            return await asyncio.wait_for(listener.__anext__(), 5)

        assert b'"h":2' in run_alone(wake())
        listener.close()
        channel.publish({"h": 1, "v": 0, "f": -1})


# ------------------------------------------------------------------ the server's routes


@pytest.fixture
def serve_deck(tmp_path):
    """Factory: the deck's server on a small folder, with or without a channel; returns its port."""
    from deckbuild.server import make_server

    (tmp_path / "index.html").write_text("<p>hola</p>")
    servers = []

    def start(channel=None, **options):
        server = make_server(tmp_path, 0, follow=channel, **options)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return server.server_address[1]

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def request(port: int, path: str, headers: dict | None = None, method: str = "GET"):
    """(status, headers, body) of one request."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request(method, path, headers=headers or {})
        response = connection.getresponse()
        return response.status, response.headers, response.read()
    finally:
        connection.close()


def publish_path(h=3, v=0, f=-1, extra=""):
    return f"{PUBLISH_PATH}?h={h}&v={v}&f={f}{extra}"


def test_every_answer_of_a_server_with_a_channel_says_so_and_none_without(serve_deck):
    with_channel = serve_deck(FollowChannel(new_key()))
    for method, path in (("HEAD", "/"), ("GET", "/"), ("GET", "/no-existe"), ("GET", PUBLISH_PATH)):
        status, headers, _ = request(with_channel, path, method=method)
        assert headers[FOLLOW["availableHeader"]] is not None, (method, path, status)
    without = serve_deck()
    for method, path in (("HEAD", "/"), ("GET", "/")):
        assert request(without, path, method=method)[1][FOLLOW["availableHeader"]] is None
    assert request(without, EVENTS_PATH)[0] == 404
    assert request(without, publish_path())[0] == 404


def test_only_the_key_in_its_header_publishes(serve_deck):
    key = new_key()
    channel = FollowChannel(key)
    port = serve_deck(channel)
    refused = [
        request(port, publish_path()),
        request(port, publish_path(), {FOLLOW["keyHeader"]: key[:-1]}),
        request(port, publish_path(), {FOLLOW["keyHeader"]: key + "x"}),
        request(port, publish_path(), {FOLLOW["keyHeader"]: ""}),
        request(port, publish_path(extra=f"&{FOLLOW['keyParam']}={key}")),
        request(port, publish_path(extra=f"&key={key}&{FOLLOW['keyHeader']}={key}")),
    ]
    assert [status for status, _, _ in refused] == [403] * len(refused)
    assert channel.published == 0
    status, headers, body = request(port, publish_path(h=7, v=2, f=1), {FOLLOW["keyHeader"]: key})
    assert status == 200 and headers["Content-Type"] == "application/json"
    assert json.loads(body) == {"followers": 0}
    assert channel.published == 1


def test_a_bad_slide_is_refused_and_moves_nothing(serve_deck):
    key = new_key()
    channel = FollowChannel(key)
    port = serve_deck(channel)
    header = {FOLLOW["keyHeader"]: key}
    for path in (PUBLISH_PATH, publish_path(h=-1), publish_path(f=-2), publish_path(h="x"),
                 publish_path(v=FOLLOW["maxSlideIndex"] + 1), publish_path(extra="&h=4"), publish_path(h="--1"),
                 publish_path(extra="&a=1&b=2&c=3"), publish_path(h="%ff")):
        status, _, body = request(port, path, header)
        assert status == 400, path
        assert "Traceback" not in body.decode("utf-8", "replace")
    # HEAD answers as GET would, and moves nothing either.
    assert request(port, publish_path(), header, method="HEAD")[0] == 200
    assert channel.published == 0


async def open_stream(port: int):
    """An event stream on loopback: (reader, writer, the response's head)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {EVENTS_PATH} HTTP/1.1\r\nHost: aula\r\nAccept: text/event-stream\r\n\r\n".encode())
    await writer.drain()
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
    return reader, writer, head.decode("latin-1")


async def next_slide(reader) -> dict:
    """The next `slide` event's data (comments and `retry:` skipped)."""
    while True:
        block = (await reader.readuntil(b"\n\n")).decode()
        for line in block.splitlines():
            if line.startswith("data: "):
                return json.loads(line[len("data: "):])


def test_a_stream_starts_at_the_latest_slide_and_outlasts_the_idle_limit(serve_deck):
    from deckbuild.server import Limits

    key = new_key()
    channel = FollowChannel(key, heartbeat_seconds=0.2)
    channel.publish({"h": 5, "v": 0, "f": -1})
    port = serve_deck(channel, limits=Limits(idle_seconds=0.3, stall_seconds=0.3))

    async def scenario():
        reader, writer, head = await open_stream(port)
        first = await asyncio.wait_for(reader.readuntil(b"\n\n"), 10)
        latest = await asyncio.wait_for(next_slide(reader), 10)
        await asyncio.sleep(1.0)   # several idle and stall limits, a few heartbeats
        await asyncio.get_running_loop().run_in_executor(
            None, request, port, publish_path(h=6), {FOLLOW["keyHeader"]: key})
        changed = await asyncio.wait_for(next_slide(reader), 10)
        writer.close()
        return head, first, latest, changed

    head, first, latest, changed = run_alone(scenario())
    assert head.startswith("HTTP/1.1 200")
    assert "content-type: text/event-stream" in head.lower()
    assert first == f"retry: {FOLLOW['retryMs']}\n\n".encode()
    assert latest == {"h": 5, "v": 0, "f": -1, "seq": 1}
    assert changed == {"h": 6, "v": 0, "f": -1, "seq": 2}


def wait_for_followers(channel, count: int, timeout: float = 10) -> int:
    deadline = time.monotonic() + timeout
    while channel.followers != count and time.monotonic() < deadline:
        time.sleep(0.02)
    return channel.followers


def test_streams_are_capped_and_a_student_who_leaves_frees_a_place_at_once(serve_deck):
    channel = FollowChannel(new_key(), max_followers=2)   # heartbeats 15 s apart: only leaving can free it
    port = serve_deck(channel)
    streams = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(2)]
    for stream in streams:
        stream.sendall(f"GET {EVENTS_PATH} HTTP/1.1\r\nHost: aula\r\n\r\n".encode())
        assert stream.recv(100).startswith(b"HTTP/1.1 200")
    assert wait_for_followers(channel, 2) == 2
    status, _, body = request(port, EVENTS_PATH)
    assert status == 503 and "máximo" in body.decode()
    streams.pop().close()
    assert wait_for_followers(channel, 1) == 1
    assert request(port, EVENTS_PATH, method="HEAD")[0] == 200   # HEAD takes no place
    streams.pop().close()
    assert wait_for_followers(channel, 0) == 0


# ------------------------------------------------------------------ `build.py serve`


@contextlib.contextmanager
def run_serve(folder, host: str, monkeypatch, capsys):
    """deckbuild.serve.serve(folder, a free port, host) in a thread: (what it printed, its port); stopped after."""
    from deckbuild import serve as serve_module

    started = []
    real_make_server = serve_module.make_server
    monkeypatch.setattr(serve_module, "make_server", lambda *a, **o: started.append(real_make_server(*a, **o))
                        or started[-1])
    monkeypatch.setattr(serve_module, "list_lan_addresses", lambda: ["192.168.1.23"])
    thread = threading.Thread(target=serve_module.serve, args=(folder, 0, host), daemon=True)
    thread.start()
    printed = ""
    deadline = time.monotonic() + 10
    while "Ctrl+C" not in printed and time.monotonic() < deadline:
        time.sleep(0.02)
        printed += capsys.readouterr().out
    try:
        yield printed, started[0].server_address[1]
    finally:
        started[0].shutdown()
        thread.join(10)


def test_serving_a_network_prints_the_lecturer_address_whose_key_publishes(tmp_path, monkeypatch, capsys):
    (tmp_path / "index.html").write_text("hola")
    with run_serve(tmp_path, "0.0.0.0", monkeypatch, capsys) as (printed, port):
        assert "http://192.168.1.23:" in printed
        url = next(word for word in printed.split() if f"?{FOLLOW['keyParam']}=" in word)
        key = url.split("=", 1)[1]
        assert url.startswith(f"http://localhost:{port}/") and len(key) >= 24
        assert request(port, "/", method="HEAD")[1][FOLLOW["availableHeader"]] is not None
        assert request(port, publish_path(), {FOLLOW["keyHeader"]: key + "x"})[0] == 403
        status, _, body = request(port, publish_path(), {FOLLOW["keyHeader"]: key})
        assert (status, json.loads(body)) == (200, {"followers": 0})
    with run_serve(tmp_path, "0.0.0.0", monkeypatch, capsys) as (again, _):
        assert key not in again   # a new key at each start
    # On this computer alone there is no one to follow: no channel, no key.
    with run_serve(tmp_path, "127.0.0.1", monkeypatch, capsys) as (printed, port):
        assert f"?{FOLLOW['keyParam']}=" not in printed and "Ctrl+C" in printed
        assert request(port, "/", method="HEAD")[1][FOLLOW["availableHeader"]] is None
        assert request(port, EVENTS_PATH)[0] == 404


# ------------------------------------------------------------------ 60 students on one laptop

STUDENTS = 60
CHANGES = 30


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def test_sixty_streams_follow_thirty_changes_in_order(serve_deck):
    key = new_key()
    channel = FollowChannel(key)
    port = serve_deck(channel)

    async def scenario():
        streams = [await open_stream(port) for _ in range(STUDENTS)]
        assert all(head.startswith("HTTP/1.1 200") for _, _, head in streams)
        # Nothing published yet: each stream opens with `retry:` alone.
        for reader, _, _ in streams:
            await asyncio.wait_for(reader.readuntil(b"\n\n"), 10)
        publisher_reader, publisher = await asyncio.open_connection("127.0.0.1", port)
        seen = [[] for _ in streams]
        to_all, to_each = [], []
        for change in range(CHANGES):
            started = time.perf_counter()
            publisher.write(f"GET {publish_path(h=change, v=change % 3)} HTTP/1.1\r\nHost: aula\r\n"
                            f"{FOLLOW['keyHeader']}: {key}\r\n\r\n".encode())
            head = await asyncio.wait_for(publisher_reader.readuntil(b"\r\n\r\n"), 10)
            length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
            answer = json.loads(await publisher_reader.readexactly(length))
            assert answer == {"followers": STUDENTS}

            async def read(index, reader):
                slide = await asyncio.wait_for(next_slide(reader), 30)
                seen[index].append(slide)
                return time.perf_counter() - started

            arrivals = await asyncio.gather(*(read(index, reader) for index, (reader, _, _) in enumerate(streams)))
            to_each += arrivals
            to_all.append(max(arrivals))
        publisher.close()
        for _, writer, _ in streams:
            writer.close()
        return seen, to_all, to_each

    seen, to_all, to_each = run_alone(scenario())
    expected = [{"h": change, "v": change % 3, "f": -1, "seq": change + 1} for change in range(CHANGES)]
    assert all(slides == expected for slides in seen)
    assert wait_for_followers(channel, 0) == 0
    milliseconds = [1000 * value for value in to_all]
    print(f"\n{STUDENTS} estudiantes, {CHANGES} cambios de diapositiva en localhost: del envío del profesor "
          f"a la llegada al último estudiante, mediana {statistics.median(milliseconds):.1f} ms, "
          f"p95 {percentile(milliseconds, 0.95):.1f} ms, peor {max(milliseconds):.1f} ms "
          f"(a cada estudiante: mediana {1000 * statistics.median(to_each):.1f} ms)")
