"""The Python client against a server that answers what no Tactus server would (issue 27,
item 5): each reply here once made the client hang, sleep for a day, hold a frame of any size,
or raise something other than a TactusError. The fake servers are real ZeroMQ sockets (a
ROUTER for requests, a PUB for events) on free loopback ports, in threads of the test."""
from __future__ import annotations

import json
import signal
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, List

import pytest
import zmq

from tactus import Client, EventStream, InvalidReply, NoAnswer, Rejected, TactusError

SONG = "ab" * 32
SUBMITTED = {"song": SONG, "jobs": []}
SONG_DONE = {"song": SONG, "jobs": [], "consensus": {"bpm": None, "detectors": []}}
#: One byte more than the protocol's largest JSON body (SPEC.md section 3.4).
OVERSIZED = (4 << 20) + 1

Answer = Callable[[str, dict, List[bytes]], List[bytes]]


class Hung(AssertionError):
    """The client was still in a call when the test's time for it ran out."""


@contextmanager
def within(seconds: float) -> Iterator[None]:
    """Fails the test when the block runs longer than `seconds` (the client would hang)."""

    def hung(signum: int, frame: object) -> None:
        raise Hung(f"the client was still in the call after {seconds} s")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def ok(body: object) -> List[bytes]:
    return [b"ok", json.dumps(body).encode()]


def busy(retry_after_ms: object) -> List[bytes]:
    return [b"error", json.dumps({"code": "busy", "message": "the queue is full", "retry_after_ms": retry_after_ms}).encode()]


class FakeServer:
    """A ROUTER socket answering each request with the frames `answer(command, body, binary)`
    returns (status, body, then any binary frames), and counting the requests by command."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.requests: List[str] = []
        self._socket = zmq.Context.instance().socket(zmq.ROUTER)
        self._socket.setsockopt(zmq.LINGER, 0)
        self.endpoint = f"tcp://127.0.0.1:{self._socket.bind_to_random_port('tcp://127.0.0.1')}"
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            if not self._socket.poll(50):
                continue
            routing, _, version, command, request_id, body, *binary = self._socket.recv_multipart()
            self.requests.append(command.decode())
            frames = self.answer(command.decode(), json.loads(body), binary)
            self._socket.send_multipart([routing, b"", version, command, request_id, *frames])

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self._socket.close()


@pytest.fixture
def serve() -> Iterator[Callable[[Answer], FakeServer]]:
    servers: List[FakeServer] = []

    def start(answer: Answer) -> FakeServer:
        servers.append(FakeServer(answer))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def a_match(**changes: object) -> dict:
    match = {"song": SONG, "bpm": 120.0, "factor": 1, "matched_bpm": 120.0, "detector": "consensus",
             "detectors": ["comb-filter"], "title": None, "artist": None, "file": "a.wav", "duration_s": 30.0}
    match.update(changes)
    return match


#: The client's calls tried, each with the command it sends.
CALLS = {
    "query": ("query", lambda client: client.query()),
    "histogram": ("query", lambda client: client.histogram()),
    "status": ("status", lambda client: client.status()),
    "submit": ("submit", lambda client: client.submit(b"RIFF")),
}


@pytest.mark.parametrize("call, status, body", [
    ("query", b"ok", b"[" * 200000),
    ("query", b"ok", b"[1,2,3]"),
    ("query", b"ok", b"{}"),
    ("query", b"ok", b'{"songs":5}'),
    ("query", b"ok", b"null"),
    ("query", b"ok", json.dumps({"songs": [a_match(bpm=float("nan"))]}).encode()),
    ("query", b"ok", b'{"songs":[],"later":1e400}'),
    ("query", b"ok", json.dumps({"songs": [a_match(factor=3)]}).encode()),
    ("histogram", b"ok", b'{"songs":[]}'),
    ("status", b"ok", b'{"jobs":[{"job":1}]}'),
    ("status", b"error", b"[1]"),
    ("status", b"error", b'{"message":"no code"}'),
    ("status", b"fine", b"{}"),
    ("submit", b"error", b'{"code":"busy","message":"full","retry_after_ms":"soon"}'),
    ("submit", b"error", b'{"code":"busy","message":"full","retry_after_ms":-5}'),
], ids=["deep-nesting", "array", "empty-object", "songs-a-number", "null", "nan", "1e400", "factor-3",
        "no-histogram", "job-without-fields", "error-array", "error-without-code", "unknown-status",
        "retry-after-soon", "retry-after-negative"])
def test_a_malformed_reply_is_an_invalid_reply_naming_the_command(serve, call: str, status: bytes,
                                                                   body: bytes) -> None:
    command, ask = CALLS[call]
    server = serve(lambda *_: [status, body])
    with Client(server.endpoint, timeout=2) as client, within(10):
        with pytest.raises(InvalidReply) as raised:
            ask(client)
    assert str(raised.value).startswith(f"{command}: ") and raised.value.command == command
    assert server.requests == [command]


@pytest.mark.parametrize("retry_after_ms", [86400000, 1e300, 10 ** 400], ids=["a-day", "1e300", "400-digits"])
def test_a_busy_wait_is_clamped_to_a_few_seconds(serve, retry_after_ms: object) -> None:
    answers = iter([busy(retry_after_ms), ok(SUBMITTED)])
    server = serve(lambda *_: next(answers))
    started = time.monotonic()
    with Client(server.endpoint, timeout=2) as client, within(10):
        assert client.submit(b"RIFF") == SUBMITTED
    assert time.monotonic() - started < 6
    assert server.requests == ["submit", "submit"]


def test_a_server_busy_for_ever_is_given_up_at_the_calls_timeout(serve, tmp_path: Path) -> None:
    song = tmp_path / "song.wav"
    song.write_bytes(b"RIFF")
    server = serve(lambda *_: busy(0))
    with Client(server.endpoint, timeout=2) as client, within(10):
        started = time.monotonic()
        with pytest.raises(Rejected) as raised:
            client.submit_files([song], wait=False, timeout=1)
        assert raised.value.code == "busy" and 1 <= time.monotonic() - started < 3
        asked = len(server.requests)
        assert 3 <= asked <= 30  # tried again every 50 ms at the least, not in a tight loop
        started = time.monotonic()
        with pytest.raises(Rejected):
            client.submit(b"RIFF", busy_timeout=0.5)
        assert 0.5 <= time.monotonic() - started < 2


def upload_server(begin: dict, received: Callable[[int, int], int]) -> Answer:
    """An upload that begins with the reply `begin` and answers a chunk at `offset` of `size`
    bytes with `received(offset, size)` bytes received."""

    def answer(command: str, body: dict, binary: List[bytes]) -> List[bytes]:
        if "offset" not in body:
            return ok(begin)
        return ok(dict(begin, received=received(body["offset"], len(binary[0]))))

    return answer


@pytest.mark.parametrize("begin, received", [
    ({"chunk_bytes": 0}, lambda offset, size: offset + size),
    ({"chunk_bytes": -5}, lambda offset, size: offset + size),
    ({"chunk_bytes": 10}, lambda offset, size: offset),
    ({"chunk_bytes": 10}, lambda offset, size: offset + size if offset == 0 else offset - 5),
    ({"chunk_bytes": 10}, lambda offset, size: 1000),
    ({"chunk_bytes": 10, "size": 5}, lambda offset, size: offset + size),
], ids=["chunk-0", "chunk-negative", "no-progress", "backwards", "past-the-end", "another-size"])
def test_an_upload_reply_that_does_not_move_the_upload_on_is_an_invalid_reply(serve, begin: dict, received) -> None:
    begin = dict({"upload": "u1", "size": 100, "received": 0}, **begin)
    server = serve(upload_server(begin, received))
    with Client(server.endpoint, timeout=2) as client, within(10):
        with pytest.raises(InvalidReply, match="^upload: "):
            client.upload(bytes(100))
    assert len(server.requests) <= 3


@pytest.mark.parametrize("frames", [
    ok({"jobs": []}) + [bytes(OVERSIZED)],
    [b"ok", json.dumps({"jobs": [], "padding": "x" * OVERSIZED}).encode()],
], ids=["binary-frame", "body"])
def test_a_frame_over_the_protocols_body_limit_is_refused(serve, frames: List[bytes]) -> None:
    server = serve(lambda *_: frames)
    with Client(server.endpoint, timeout=0.5, retries=0) as client, within(10):
        with pytest.raises(NoAnswer, match="'status'"):
            client.status()
    assert server.requests == ["status"]


@contextmanager
def publishing(*events: List[bytes]) -> Iterator[str]:
    """A PUB socket sending `events` (each its frames) over and over until the block ends."""
    socket = zmq.Context.instance().socket(zmq.PUB)
    socket.setsockopt(zmq.LINGER, 0)
    endpoint = f"tcp://127.0.0.1:{socket.bind_to_random_port('tcp://127.0.0.1')}"
    stop = threading.Event()

    def publish() -> None:
        while not stop.wait(0.05):
            for frames in events:
                socket.send_multipart(frames)

    thread = threading.Thread(target=publish, daemon=True)
    thread.start()
    try:
        yield endpoint
    finally:
        stop.set()
        thread.join()
        socket.close()


def event(name: str, body: bytes) -> List[bytes]:
    return [SONG.encode(), b"TACTUS1", name.encode(), body]


def test_events_that_do_not_follow_their_schema_are_skipped() -> None:
    hostile = [event("song.done", b"[1]"), event("song.done", b"{}"), event("job.done", b'{"song":5}'),
               event("song.done", b"[" * 200000)]
    with publishing(*hostile, event("song.done", json.dumps(SONG_DONE).encode())) as endpoint, within(20):
        with EventStream(endpoint, topics=[""], curve=None, context=zmq.Context.instance()) as stream:
            received = [stream.next(timeout=5) for _ in range(3)]
    assert [(item.name, item.body) for item in received if item] == [("song.done", SONG_DONE)] * 3


def test_an_event_over_the_protocols_body_limit_is_refused() -> None:
    huge = dict(SONG_DONE, padding="x" * OVERSIZED)
    with publishing(event("song.done", json.dumps(huge).encode())) as endpoint, within(20):
        with EventStream(endpoint, topics=[""], curve=None, context=zmq.Context.instance()) as stream:
            assert stream.next(timeout=1.5) is None


def test_a_servers_message_is_shown_with_its_control_characters_escaped(serve) -> None:
    forged = {"code": "not-found", "message": "no such song\n\x1b[2Jtactus: all songs deleted"}
    server = serve(lambda *_: [b"error", json.dumps(forged).encode()])
    with Client(server.endpoint, timeout=2) as client:
        with pytest.raises(Rejected) as raised:
            client.status()
    assert raised.value.message == forged["message"]
    assert str(raised.value) == "not-found: no such song\\n\\x1b[2Jtactus: all songs deleted"
    assert isinstance(raised.value, TactusError)
