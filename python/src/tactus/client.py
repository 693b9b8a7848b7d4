"""A client of a Tactus server over its ZeroMQ wire protocol (protocol/SPEC.md, TACTUS1)."""
from __future__ import annotations

import json
import os
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, TypeVar, Union

import zmq

from .curve import CurveKeys
from .errors import InvalidReply, NoAnswer, Rejected
from .messages import read_body

PROTOCOL = b"TACTUS1"
#: The largest song sent in one ``submit`` message; larger ones go as an upload in chunks
#: (a server takes no frame over 1 MiB by default and drops the connection that sends one;
#: SPEC.md sections 3.4 and 3.9).
INLINE_SONG_BYTES = 1 << 20
#: The largest frame taken from a server (``ZMQ_MAXMSGSIZE``): the protocol's largest JSON body,
#: 4 MiB (SPEC.md section 3.4). The binary frames this client asks for (a render's pieces) are at
#: most 2 MiB, so a larger frame is a broken or hostile server's: libzmq drops the connection
#: before holding it (the request then ends in :class:`NoAnswer`).
MAX_FRAME_BYTES = 4 << 20
#: The largest render :meth:`Client.render` puts together (the protocol's largest audio, 512 MiB).
RENDER_MAX_BYTES = 512 << 20
#: The wait between two tries of a request answered ``busy``: the ``retry_after_ms`` the server
#: asks for (1 s when it names none), kept within these bounds (milliseconds).
BUSY_WAIT_MS = (50, 5000)
#: How long :meth:`Client.submit` waits out ``busy`` answers in all, unless told otherwise (seconds).
BUSY_TIMEOUT = 60.0
T = TypeVar("T")
DEFAULT_SERVER = "tcp://127.0.0.1:5555"

#: File extensions submitted from a folder (the formats the server decodes).
AUDIO_EXTENSIONS = frozenset(
    [".wav", ".flac", ".mp3", ".ogg", ".oga", ".opus", ".aif", ".aiff", ".au", ".w64", ".caf", ".mp2", ".mpga"]
)

Json = Dict[str, Any]
PathLike = Union[str, "os.PathLike[str]"]


@dataclass
class Event:
    """One event of the server's events socket: its name (``job.done``, ``job.failed``,
    ``song.done``, ``worker.joined``, ``worker.lost``), its topic and its JSON body."""

    name: str
    topic: str
    body: Json


@dataclass
class Submitted:
    """A file submitted: its path, the song id and jobs the server answered, and once waited
    for, the jobs as they ended (``done`` is True when every job is final)."""

    path: str
    song: str
    jobs: List[Json]
    done: bool = False
    consensus: Optional[Json] = None


@dataclass
class Progress:
    """What a progress callback of :meth:`Client.submit_files` is given."""

    submitted: int
    finished: int
    total: int
    last: Optional[Submitted] = None
    skipped: List[str] = field(default_factory=list)


FINAL_STATES = frozenset(["done", "failed", "cancelled"])


def events_endpoint(server: str) -> str:
    """The events socket of the server whose frontend is `server`: the same host, port + 2."""
    prefix = "tcp://"
    host, _, port = server[len(prefix):].rpartition(":") if server.startswith(prefix) else ("", "", "")
    if not host or not port.isdigit():
        raise ValueError(f"cannot derive the events endpoint from {server!r}: give events=")
    return f"{prefix}{host}:{int(port) + 2}"


class Client:
    """A connection to a Tactus server's frontend (and, for events, its events socket).

    Requests go over one DEALER socket, each with its own request id; a request that gets no
    answer within ``timeout`` seconds is sent again once (every request but a forced submit
    may be repeated safely, SPEC section 8), then raises :class:`NoAnswer`. An error reply raises
    :class:`Rejected` with the server's ``code`` and ``message``. Replies are plain dicts with the
    protocol's wire names, each checked against the protocol's schema before it is used: one
    that is not what the protocol allows raises :class:`InvalidReply` naming the command.

    >>> with Client("tcp://127.0.0.1:5555") as tactus:                    # doctest: +SKIP
    ...     for song in tactus.query(165, 175, octave=True, limit=20):
    ...         print(song["bpm"], song["title"] or song["file"])

    CURVE keys come from ``curve`` (a :class:`CurveKeys`), else from the environment variables
    ``TACTUS_CURVE_SERVER_KEY`` and ``TACTUS_CURVE_SECRET_KEY`` (certificate files). The server
    comes from ``server``, else ``TACTUS_SERVER``, else ``tcp://127.0.0.1:5555``.
    """

    def __init__(
        self,
        server: Optional[str] = None,
        *,
        events: Optional[str] = None,
        curve: Optional[CurveKeys] = None,
        timeout: float = 5.0,
        retries: int = 1,
        context: Optional[zmq.Context] = None,  # type: ignore[type-arg]
    ) -> None:
        self.server = server or os.environ.get("TACTUS_SERVER") or DEFAULT_SERVER
        self.events_endpoint = events
        self.curve = curve if curve is not None else CurveKeys.from_environment()
        self.timeout = timeout
        self.retries = max(retries, 0)
        self._context = context or zmq.Context.instance()
        self._socket = self._context.socket(zmq.DEALER)
        self._socket.setsockopt(zmq.LINGER, 0)
        self._socket.setsockopt(zmq.MAXMSGSIZE, MAX_FRAME_BYTES)
        if self.curve:
            self.curve.apply(self._socket)
        self._socket.connect(self.server)
        self._prefix = uuid.uuid4().hex[:8]
        self._counter = 0

    # Context management ------------------------------------------------------------------

    def close(self) -> None:
        """Closes the connection."""
        self._socket.close(linger=0)

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # The wire ----------------------------------------------------------------------------

    def request(self, command: str, body: Optional[Json] = None, binary: Optional[bytes] = None,
                timeout: Optional[float] = None) -> Json:
        """Sends one request and returns the reply body of its ``ok`` answer.

        Raises :class:`Rejected` for an ``error`` answer, :class:`NoAnswer` when none came,
        :class:`InvalidReply` for an answer the protocol does not allow.
        """
        reply, _ = self._exchange(command, body or {}, binary, timeout)
        return reply

    def _exchange(self, command: str, body: Json, binary: Optional[bytes],
                  timeout: Optional[float]) -> "tuple[Json, List[bytes]]":
        self._counter += 1
        request_id = f"{self._prefix}-{self._counter}".encode()
        frames = [b"", PROTOCOL, command.encode(), request_id, json.dumps(body, separators=(",", ":")).encode()]
        if binary is not None:
            frames.append(binary)
        wait = timeout if timeout is not None else self.timeout
        if binary is not None:
            wait += len(binary) / 20e6  # a second more per 20 MB sent
        attempts = self.retries + 1 if _idempotent(command, body) else 1
        for _ in range(attempts):
            deadline = time.monotonic() + wait
            # A DEALER with no peer blocks in send: with no connection (a server that refused
            # the CURVE handshake drops it) the request waits for one until the deadline.
            if not self._socket.poll(int(wait * 1000), zmq.POLLOUT):
                continue
            try:
                self._socket.send_multipart(frames, flags=zmq.DONTWAIT)
            except zmq.Again:
                continue
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not self._socket.poll(int(remaining * 1000)):
                    break
                reply = self._socket.recv_multipart()
                # [delimiter, version, command, request id, status, body, binary...]
                if len(reply) < 6 or reply[0] != b"" or reply[3] != request_id:
                    continue  # a late answer to an earlier request
                if reply[4] not in (b"ok", b"error"):
                    raise InvalidReply(command, "the reply's status is neither ok nor error")
                if reply[4] == b"ok":
                    return read_body(reply[5], f"reply.{command}", command), reply[6:]
                raise Rejected(read_body(reply[5], "reply.error", command))
        raise NoAnswer(self.server, wait * attempts, attempts, command)

    # Commands ----------------------------------------------------------------------------

    def submit(self, audio: bytes, *, name: Optional[str] = None, detectors: Optional[Sequence[str]] = None,
               params: Optional[Dict[str, Json]] = None, force: bool = False, wait_busy: bool = True,
               busy_timeout: float = BUSY_TIMEOUT) -> Json:
        """Submits a song's bytes; returns ``{"song", "jobs"}`` at once (the analysis goes on).

        While the server answers ``busy``, waits the ``retry_after_ms`` it asks for (within
        ``BUSY_WAIT_MS``: 50 ms to 5 s) and tries again, for ``busy_timeout`` seconds in all;
        then (at once when ``wait_busy`` is False) the ``busy`` :class:`Rejected` is raised.
        """
        deadline = time.monotonic() + (busy_timeout if wait_busy else 0)
        body: Json = {}
        if name is not None:
            body["name"] = name
        if detectors is not None:
            body["detectors"] = list(detectors)
        if params is not None:
            body["params"] = params
        if force:
            body["force"] = True
        if len(audio) > INLINE_SONG_BYTES:
            body["upload"] = self._retrying_busy(lambda: self.upload(audio), deadline)
            return self._retrying_busy(lambda: self.request("submit", body), deadline)
        return self._retrying_busy(lambda: self.request("submit", body, audio), deadline)

    def submit_path(self, path: str, *, detectors: Optional[Sequence[str]] = None, force: bool = False,
                    busy_timeout: float = BUSY_TIMEOUT) -> Json:
        """Submits a file that lies under the server's library roots by its path, as the server
        sees it (the workers read it where it lies); returns ``{"song", "jobs"}``. A path outside
        the roots is refused with the code ``forbidden``, a file the server cannot find ``not-found``."""
        body: Json = {"path": path}
        if detectors is not None:
            body["detectors"] = list(detectors)
        if force:
            body["force"] = True
        return self._retrying_busy(lambda: self.request("submit", body), time.monotonic() + busy_timeout)

    def upload(self, audio: bytes) -> str:
        """Sends a song's bytes in the chunks the server asks for (SPEC.md section 3.9) and
        returns the upload's id, for a ``submit`` with ``upload``. :meth:`submit` uploads songs
        over ``INLINE_SONG_BYTES`` by itself.

        Each answer must move the upload on (more bytes received, never past the song's size):
        :class:`InvalidReply` otherwise, so that a server cannot keep the client sending."""
        status = self.request("upload", {"size": len(audio), "sha256": _song_id(audio)})
        if status["size"] != len(audio):
            raise InvalidReply("upload", f"the server has the upload's size as {status['size']} bytes, "
                                         f"not the song's {len(audio)}")
        sent = -1
        while status["received"] < len(audio):
            start = status["received"]
            if start <= sent:
                raise InvalidReply("upload", f"the server has {start} bytes after a chunk from byte {sent}: "
                                             "the upload does not move on")
            chunk = audio[start:start + min(status["chunk_bytes"], INLINE_SONG_BYTES)]
            status, sent = self.request("upload", {"upload": status["upload"], "offset": start}, chunk), start
        if status["received"] > len(audio):
            raise InvalidReply("upload", f"the server has {status['received']} bytes of a song of {len(audio)}")
        return status["upload"]

    @staticmethod
    def _retrying_busy(ask: "Callable[[], T]", deadline: float) -> "T":
        """``ask()``; while the server answers ``busy``, waits the ``retry_after_ms`` it asks for
        (within ``BUSY_WAIT_MS``, never past ``deadline``, a ``time.monotonic()``) and asks
        again; the ``busy`` answer that comes at the deadline is raised."""
        while True:
            try:
                return ask()
            except Rejected as refusal:
                remaining = deadline - time.monotonic()
                if refusal.code != "busy" or remaining <= 0:
                    raise
                asked_ms = 1000 if refusal.retry_after_ms is None else refusal.retry_after_ms
                # Kept within bounds before it becomes seconds: a 400-digit integer is no float.
                wait_ms = min(max(asked_ms, BUSY_WAIT_MS[0]), BUSY_WAIT_MS[1])
                time.sleep(min(wait_ms / 1000, remaining))

    def submit_files(self, paths: Iterable[PathLike], *, wait: bool = True,
                     progress: Optional[Callable[[Progress], None]] = None,
                     detectors: Optional[Sequence[str]] = None, force: bool = False,
                     status_interval: float = 5.0, timeout: Optional[float] = None) -> List[Submitted]:
        """Submits files, and the audio files under folders, one after the other; with ``wait``
        follows them to the end through the events (and ``status`` every ``status_interval``
        seconds, since events may be missed). ``progress`` is called after each submission and
        each song that finishes. Returns one :class:`Submitted` per file sent; files of a folder
        that are not audio are listed in the progress' ``skipped``.

        ``timeout`` (seconds) bounds the whole call: :class:`TimeoutError` when the songs are not
        all analysed by then, the ``busy`` :class:`Rejected` when the server is still busy (without
        ``timeout``, each submission waits out ``busy`` for ``BUSY_TIMEOUT`` seconds at the most).
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        files, skipped = _expand(paths)
        subscriber = self.events(topics=[]) if wait else None
        submitted: List[Submitted] = []
        pending: Dict[str, List[Submitted]] = {}
        finished = 0
        state = Progress(submitted=0, finished=0, total=len(files), skipped=skipped)

        def finish(song: str, jobs: List[Json], consensus: Optional[Json]) -> None:
            nonlocal finished
            for item in pending.pop(song, []):
                item.done, item.consensus = True, consensus
                item.jobs = [job for job in jobs if job["job"] in {j["job"] for j in item.jobs}] or item.jobs
                finished += 1
                state.finished, state.last = finished, item
                if progress:
                    progress(state)

        try:
            for path in files:
                with open(path, "rb") as file:
                    audio = file.read()
                if subscriber is not None:
                    subscriber.subscribe(_song_id(audio))
                patience = BUSY_TIMEOUT if deadline is None else deadline - time.monotonic()
                answer = self.submit(audio, name=os.path.basename(path), detectors=detectors, force=force,
                                     busy_timeout=patience)
                item = Submitted(path=path, song=answer["song"], jobs=answer["jobs"])
                submitted.append(item)
                state.submitted, state.last = len(submitted), item
                if progress:
                    progress(state)
                if wait:
                    pending.setdefault(item.song, []).append(item)
                    if all(job["state"] in FINAL_STATES for job in item.jobs):
                        finish(item.song, item.jobs, self.result(item.song)["consensus"])
            if subscriber is None:
                return submitted
            last_check = time.monotonic()
            while pending:
                if deadline is not None and time.monotonic() > deadline:
                    raise TimeoutError(f"{len(pending)} songs still being analysed after {timeout} s")
                event = subscriber.next(timeout=0.5)
                if event is not None and event.name == "song.done" and event.body["song"] in pending:
                    finish(event.body["song"], event.body["jobs"], event.body.get("consensus"))
                if time.monotonic() - last_check >= status_interval:
                    last_check = time.monotonic()
                    for song in list(pending)[:50]:
                        jobs = self.status(song=song)["jobs"]
                        if jobs and all(job["state"] in FINAL_STATES for job in jobs):
                            finish(song, jobs, self.result(song)["consensus"])
            return submitted
        finally:
            if subscriber is not None:
                subscriber.close()

    def status(self, *, job: Optional[int] = None, song: Optional[str] = None) -> Json:
        """One job, a song's jobs, or (with neither) the server's queue, workers and throughput."""
        body: Json = {}
        if job is not None:
            body["job"] = job
        if song is not None:
            body["song"] = song
        return self.request("status", body)

    def result(self, song: str, *, detectors: Optional[Sequence[str]] = None, windows: bool = False) -> Json:
        """A song's stored analyses (with per-window tempi when ``windows``), pending detectors and consensus."""
        body: Json = {"song": song}
        if detectors is not None:
            body["detectors"] = list(detectors)
        if windows:
            body["windows"] = True
        return self.request("result", body)

    def query(self, min_bpm: float = 1, max_bpm: float = 1000, *, detector: Optional[str] = None,
              agree: Optional[int] = None, octave: bool = False, order: Optional[str] = None,
              descending: bool = False, limit: Optional[int] = None, offset: Optional[int] = None) -> List[Json]:
        """Songs whose tempo lies in ``min_bpm``..``max_bpm`` (each a ``tempo_match`` dict:
        ``song``, ``bpm``, ``factor``, ``matched_bpm``, ``detector``, ``detectors``,
        ``confidence``, ``title``, ``artist``, ``file``, ``duration_s``, ``paths``).

        ``order`` sorts every match before ``offset`` and ``limit`` page them: ``closeness``
        (the default), ``bpm``, ``newest``, ``title``, ``artist``, ``duration``,
        ``confidence`` or ``agreement`` (not with ``detector``); ``descending`` reverses it."""
        return list(self._query(min_bpm, max_bpm, detector=detector, agree=agree, octave=octave, order=order,
                                descending=descending, limit=limit, offset=offset)["songs"])

    def histogram(self, min_bpm: float = 1, max_bpm: float = 1000, *, bin_width: float = 1.0,
                  detector: Optional[str] = None, agree: Optional[int] = None, octave: bool = False) -> Json:
        """How the matched tempi of *every* song in the range are spread: ``{"total", "bins"}``,
        each bin ``{"lower", "width", "count"}`` (``lower`` <= matched tempo < ``lower + width``),
        lowest first, empty bins between included. Counted by the server, whatever the library's size."""
        reply = self._query(min_bpm, max_bpm, detector=detector, agree=agree, octave=octave, limit=0,
                            histogram=bin_width)
        if "histogram" not in reply:
            raise InvalidReply("query", "the reply has no histogram, which the request asked for")
        return dict(reply["histogram"])

    def _query(self, min_bpm: float, max_bpm: float, *, octave: bool = False, descending: bool = False,
               **fields: Any) -> Json:
        body: Json = {"min_bpm": min_bpm, "max_bpm": max_bpm}
        body.update({name: value for name, value in fields.items() if value is not None})
        if octave:
            body["octave"] = True
        if descending:
            body["descending"] = True
        return self.request("query", body)

    def query_frame(self, min_bpm: float = 1, max_bpm: float = 1000, **options: Any) -> "Any":
        """:meth:`query` as a pandas DataFrame (needs pandas: ``pip install tactus-client[pandas]``)."""
        return to_frame(self.query(min_bpm, max_bpm, **options))

    def compare(self, song: Optional[str] = None, *, bin_width: Optional[float] = None) -> Json:
        """One song's results side by side (``{"song": ...}``), or without ``song`` the detectors
        over the whole library (``{"library": ...}``: agreements, accuracy, histogram, to_check)."""
        body: Json = {}
        if song is not None:
            body["song"] = song
        if bin_width is not None:
            body["bin_width"] = bin_width
        return self.request("compare", body)

    def playlist(self, *, cadence: Optional[float] = None, minutes: Optional[float] = None,
                 profile: Optional[str] = None, tolerance: Optional[float] = None,
                 detector: Optional[str] = None) -> Json:
        """Songs for a run: a ``cadence`` (steps per minute) for ``minutes``, or a ``profile``
        such as ``"10m@150,5m@170"``. Returns ``{"entries", "fills"}``."""
        body: Json = {}
        for name, value in (("cadence", cadence), ("minutes", minutes), ("profile", profile),
                            ("tolerance", tolerance), ("detector", detector)):
            if value is not None:
                body[name] = value
        return dict(self.request("playlist", body)["playlist"])

    def truth(self, song: str, bpm: Optional[float] = None) -> Json:
        """A song's reference tempo, set first when ``bpm`` is given."""
        body: Json = {"song": song}
        if bpm is not None:
            body["bpm"] = bpm
        return self.request("truth", body)

    def truth_import(self, references: Sequence[Tuple[str, float]], source: str) -> int:
        """Sets the reference tempi of many songs, all or nothing: ``references`` are
        ``(song, bpm)`` pairs, each song by its full id (``resolve`` turns other names into ids),
        at most 5000; ``source`` is recorded with each. Returns how many were set."""
        body: Json = {"source": source, "references": [{"song": song, "bpm": bpm} for song, bpm in references]}
        return int(self.request("truth-import", body)["imported"])

    def detectors(self) -> List[Json]:
        """The detectors offered: ``{"detector": {...}, "workers", "queued"}`` each."""
        return list(self.request("detectors")["detectors"])

    def cancel(self, *, job: Optional[int] = None, song: Optional[str] = None) -> List[int]:
        """Cancels one job or a song's unfinished jobs; returns the ids cancelled."""
        body: Json = {"job": job} if job is not None else {"song": song}
        return list(self.request("cancel", body)["cancelled"])

    def resolve(self, names: Sequence[str]) -> List[Json]:
        """The songs that names (ids, id prefixes, stored paths, file names) stand for, in order:
        each ``{"name", "song"}``, or ``{"name", "problem"}`` (its ``code`` and ``message``) when it names none or several."""
        return list(self.request("resolve", {"names": list(names)})["songs"])

    def tags(self, action: str = "read", *, songs: Optional[Sequence[str]] = None, all: bool = False,
             offset: Optional[int] = None, limit: Optional[int] = None, replace: bool = False,
             detector: Optional[str] = None, min_confidence: Optional[float] = None, dry_run: bool = False,
             backup: bool = False, timeout: float = 300.0) -> Json:
        """BPM tags of songs' files under the server's library roots: ``action`` ``read`` or
        ``write`` (the tempo the library holds), for ``songs`` or ``all`` of them (paged by
        ``offset`` and ``limit``). Returns ``{"files", "total"}``. A write is never sent twice."""
        body: Json = {"action": action}
        for name, value in (("songs", list(songs) if songs is not None else None), ("offset", offset),
                            ("limit", limit), ("detector", detector), ("min_confidence", min_confidence)):
            if value is not None:
                body[name] = value
        for name, flag in (("all", all), ("replace", replace), ("dry_run", dry_run), ("backup", backup)):
            if flag:
                body[name] = True
        return self.request("tags", body, timeout=timeout)

    def scan(self, paths: Optional[Sequence[str]] = None, *, timeout: float = 600.0) -> Json:
        """Compares the server's library roots (or ``paths`` below them) with the library and
        queues new and changed files; returns the scan's summary (``new``, ``changed``, ``moved``,
        ``missing``, ``unchanged``, ``skipped``...)."""
        return self.request("scan", {"paths": list(paths)} if paths is not None else {}, timeout=timeout)

    def prune(self, *, dry_run: bool = False) -> Json:
        """Removes the song bytes no job needs; returns what was (or, with ``dry_run``, would be) removed."""
        return self.request("prune", {"dry_run": True} if dry_run else {})

    def stretch(self, song: str, bpm: float, *, max_stretch_pct: Optional[float] = None) -> Json:
        """Asks the server to render a song of its library at ``bpm``: the render's status
        (``render``, ``state``...), ``pending`` until done; poll it with :meth:`render`."""
        body: Json = {"song": song, "bpm": bpm}
        if max_stretch_pct is not None:
            body["max_stretch_pct"] = max_stretch_pct
        return self.request("stretch", body)

    def render(self, render: str) -> "tuple[Json, Optional[bytes]]":
        """A render's status and, once its ``state`` is ``done``, the WAV file's bytes, asked
        for a piece at a time (the server sends at most 2 MiB a reply: ``offset`` in the
        request, SPEC.md section 3.7)."""
        status, wav = self._render_piece(render, 0)
        if wav is None:
            return status, None
        pieces = [wav]
        received = len(wav)
        # A server older than pieces sends the whole file at once, whatever the offset.
        size = status.get("bytes", received)
        if not isinstance(size, int) or not received <= size <= RENDER_MAX_BYTES:
            raise InvalidReply("render", f"a render of {size!r} bytes (at most {RENDER_MAX_BYTES} taken)")
        while received < size:
            _, piece = self._render_piece(render, received)
            if not piece or len(piece) > size - received:
                raise InvalidReply("render", f"no bytes, or too many, from {received} of the render's {size}")
            pieces.append(piece)
            received += len(piece)
        return status, b"".join(pieces)

    def _render_piece(self, render: str, offset: int) -> "tuple[Json, Optional[bytes]]":
        """One ``render`` request for the piece from ``offset``, asked again while the server
        answers ``busy`` (for at most a minute)."""
        status, frames = self._retrying_busy(
            lambda: self._exchange("render", {"render": render, "offset": offset}, None, None), time.monotonic() + 60)
        done = status.get("state") == "done"
        if len(frames) != (1 if done else 0):
            raise InvalidReply("render", "the WAV file comes exactly when the render is done")
        return status, frames[0] if done else None

    def cadence(self, recording: bytes, name: str, *, timeout: Optional[float] = None) -> Json:
        """The cadence of an accelerometer recording (its CSV bytes) or a watch's workout (GPX,
        TCX or FIT bytes: then with heart rate and pace), named ``name``, analysed by the server:
        steps per minute, over time and overall. A recording over
        ``INLINE_SONG_BYTES`` is uploaded first (:meth:`upload`) and the request names it."""
        if len(recording) > INLINE_SONG_BYTES:
            return self.request("cadence", {"name": name, "upload": self.upload(recording)}, timeout=timeout)
        return self.request("cadence", {"name": name}, recording, timeout=timeout)

    def events(self, topics: Optional[Sequence[str]] = None) -> "EventStream":
        """The server's events from now on (``topics``: song ids or ``worker:`` prefixes; all
        by default), as an iterator of :class:`Event` (see :class:`EventStream`)."""
        endpoint = self.events_endpoint or events_endpoint(self.server)
        return EventStream(endpoint, topics=[""] if topics is None else topics, curve=self.curve, context=self._context)


class EventStream:
    """The server's events: iterate for ever (``for event in stream``), or ``next(timeout)``.

    Events are notifications, not a reliable channel (SPEC section 5): subscribe before
    submitting, and ask ``status`` now and then. An event whose body is not what its schema
    allows is skipped, as a damaged one is.
    """

    def __init__(self, endpoint: str, *, topics: Sequence[str], curve: Optional[CurveKeys],
                 context: zmq.Context) -> None:  # type: ignore[type-arg]
        self.endpoint = endpoint
        self._socket = context.socket(zmq.SUB)
        self._socket.setsockopt(zmq.LINGER, 0)
        self._socket.setsockopt(zmq.MAXMSGSIZE, MAX_FRAME_BYTES)
        if curve:
            curve.apply(self._socket)
        for topic in topics:
            self.subscribe(topic)
        self._socket.connect(endpoint)

    def subscribe(self, topic: str) -> None:
        self._socket.setsockopt(zmq.SUBSCRIBE, topic.encode())

    def unsubscribe(self, topic: str) -> None:
        self._socket.setsockopt(zmq.UNSUBSCRIBE, topic.encode())

    def next(self, timeout: Optional[float] = None) -> Optional[Event]:
        """The next event, waiting at most ``timeout`` seconds (for ever with None); None when none came."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            remaining = None if deadline is None else max(deadline - time.monotonic(), 0)
            if not self._socket.poll(None if remaining is None else int(remaining * 1000)):
                return None
            frames = self._socket.recv_multipart()
            if len(frames) == 4 and frames[1] == PROTOCOL:
                try:
                    name = frames[2].decode()
                    return Event(name=name, topic=frames[0].decode(), body=read_body(frames[3], f"event.{name}", name))
                except (ValueError, InvalidReply):
                    pass  # a damaged event (one that breaks its schema too) is skipped, as the protocol says
            if deadline is not None and time.monotonic() >= deadline:
                return None

    def __iter__(self) -> Iterator[Event]:
        while True:
            event = self.next()
            if event is not None:
                yield event

    def close(self) -> None:
        self._socket.close(linger=0)

    def __enter__(self) -> "EventStream":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _idempotent(command: str, body: Json) -> bool:
    """Whether sending the request twice does no more than sending it once (SPEC.md section 8),
    so that it may be sent again when no answer came: all but a forced ``submit`` and a
    ``tags`` write that is not a dry run."""
    if command == "submit":
        return body.get("force") is not True
    if command == "tags":
        return body.get("action") == "read" or body.get("dry_run") is True
    return True


def to_frame(rows: List[Json]) -> "Any":
    """Rows of dicts as a pandas DataFrame (lists such as ``detectors`` kept as lists)."""
    try:
        import pandas  # type: ignore[import-not-found]
    except ImportError as error:
        raise ImportError("DataFrames need pandas: pip install 'tactus-client[pandas]'") from error
    return pandas.DataFrame(rows)


def _expand(paths: Iterable[PathLike]) -> "tuple[List[str], List[str]]":
    files: List[str] = []
    skipped: List[str] = []
    for path in paths:
        path = os.fspath(path)
        if os.path.isdir(path):
            for root, directories, names in os.walk(path):
                directories.sort()
                for name in sorted(names):
                    full = os.path.join(root, name)
                    if os.path.splitext(name)[1].lower() in AUDIO_EXTENSIONS and os.path.isfile(full):
                        files.append(full)
                    else:
                        skipped.append(full)
        else:
            files.append(path)
    return files, skipped


def _song_id(audio: bytes) -> str:
    import hashlib

    return hashlib.sha256(audio).hexdigest()
