"""Peers that connect to a real `tactus serve` without being its clients or workers (anyone may,
without CURVE) and speak raw ZMTP 3.0, as an attacker's own code would: frames larger than any
worker sends, frames begun and never finished, and more idle connections than anyone needs. The
coordinator must drop them without holding their bytes, and go on answering (SPEC section 3.4,
BAD-INPUT.md)."""
from __future__ import annotations

import os
import signal
import socket
import struct
import threading
import time
from pathlib import Path

import tactus

from conftest import running_server

MIB = 1 << 20


def resident_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


class RawDealer:
    """A ZMTP 3.0 peer (NULL mechanism) on a plain TCP socket: the greeting and READY command
    of a DEALER (or `socket_type`), then frames written by hand. (pyzmq's own SUB with a 1 MiB
    subscription crashes its process when closed, so subscriptions are written by hand too.)"""

    def __init__(
        self, endpoint: str, socket_type: bytes = b"DEALER", source: str | None = None, wait: bool = True
    ) -> None:
        """Connects (from `source`, an address of this host) and sends the greeting and READY;
        with `wait`, waits for the server's READY (a peer may send messages only once the server
        has admitted it: frames sent before are taken for handshake commands)."""
        host, port = endpoint.removeprefix("tcp://").rsplit(":", 1)
        self.socket = socket.create_connection(
            (host, int(port)), timeout=10, source_address=(source, 0) if source else None)
        self.socket.sendall(b"\xff" + b"\x00" * 8 + b"\x7f" + bytes([3, 0]) + b"NULL".ljust(20, b"\x00") + b"\x00" * 32)
        greeting = b""
        while len(greeting) < 64:
            try:
                received = self.socket.recv(64 - len(greeting))
            except OSError:
                received = b""
            if not received:
                # Shut down as it was accepted: only a peer that does not wait may expect that.
                assert not wait, "the server closed the connection during the greeting"
                return
            greeting += received
        body = bytes([5]) + b"READY" + bytes([11]) + b"Socket-Type" + struct.pack(">I", len(socket_type)) + socket_type
        self.socket.sendall(bytes([0x04, len(body)]) + body)
        if wait:
            assert self.admitted(), "the server did not complete the handshake"

    def admitted(self) -> bool:
        """Whether the server completes the handshake: its READY command arrives (within 5 s)."""
        header = self.socket.recv(2)
        if len(header) < 2 or header[0] != 0x04:
            return False
        body = b""
        while len(body) < header[1]:
            received = self.socket.recv(header[1] - len(body))
            if not received:
                return False
            body += received
        return body[1:6] == b"READY"

    def begin_result(self, size: int) -> None:
        """The frames of a version-2 RESULT up to the header of a body frame of `size` bytes."""
        def short(data: bytes) -> bytes:
            return bytes([0x01, len(data)]) + data
        self.socket.sendall(short(b"TACTUS2") + short(b"RESULT") + bytes([0x02]) + struct.pack(">Q", size))

    def send_frame(self, data: bytes) -> int:
        """One whole frame of `data` (the last of its message); the bytes taken before the
        server closed."""
        self.socket.sendall(bytes([0x02]) + struct.pack(">Q", len(data)))
        taken = 0
        try:
            for start in range(0, len(data), MIB):
                self.socket.sendall(data[start:start + MIB])
                taken += len(data[start:start + MIB])
        except OSError:
            pass
        return taken

    def send_until_refused(self, count: int) -> int:
        """Sends up to `count` bytes of payload; the bytes sent before the server closed."""
        chunk, sent = b"y" * MIB, 0
        try:
            while sent < count:
                self.socket.sendall(chunk[: min(MIB, count - sent)])
                sent += min(MIB, count - sent)
        except OSError:
            pass
        return sent

    def closed_by_server(self, within: float) -> bool:
        """Whether the server closes the connection within `within` seconds (what it sends
        meanwhile, ZMTP's PING, is read and ignored)."""
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            self.socket.settimeout(max(deadline - time.monotonic(), 0.01))
            try:
                if not self.socket.recv(65536):
                    return True
            except socket.timeout:
                return False
            except OSError:
                return True
        return False

    def close(self) -> None:
        self.socket.close()


def query_seconds(server) -> float:
    with tactus.Client(server.frontend, timeout=10) as client:
        start = time.monotonic()
        client.query(min_bpm=60, max_bpm=200)
        return time.monotonic() - start


def test_frames_larger_than_any_worker_sends_drop_the_connection_at_once(tmp_path: Path) -> None:
    with running_server(tmp_path / "data") as server:
        peers = [RawDealer(server.backend) for _ in range(4)]
        for peer in peers:
            peer.begin_result(400 * MIB)
        sent = [0] * len(peers)

        def flood(index: int) -> None:
            sent[index] = peers[index].send_until_refused(400 * MIB)

        threads = [threading.Thread(target=flood, args=(index,)) for index in range(len(peers))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        # Refused when the frame's size was read: at most what the socket buffers held on the way.
        assert all(count < 64 * MIB for count in sent), f"bytes taken before the connection dropped: {sent}"
        assert all(peer.closed_by_server(within=5) for peer in peers)
        assert server.process.poll() is None
        assert resident_mb(server.process.pid) < 300
        assert query_seconds(server) < 0.5
        for peer in peers:
            peer.close()


def test_a_frame_begun_and_never_finished_is_dropped_with_its_bytes(tmp_path: Path) -> None:
    with running_server(tmp_path / "data") as server:
        # A worker's frame is at most what a two-hour song's RESULT needs (5.4 MiB by default).
        peers = [RawDealer(server.backend) for _ in range(4)]
        for peer in peers:
            peer.begin_result(5 * MIB)
            assert peer.send_until_refused(4 * MIB) == 4 * MIB
        holding = resident_mb(server.process.pid)
        assert query_seconds(server) < 0.5
        started = time.monotonic()
        # A PING every 5 s, 30 s for anything complete to come back: within 35 s and a margin.
        assert all(peer.closed_by_server(within=50) for peer in peers), "a peer stalled mid-frame was kept"
        dropped_after = time.monotonic() - started
        time.sleep(0.5)
        released = resident_mb(server.process.pid)
        assert released < holding - 8, f"{holding:.0f} MB while held, {released:.0f} MB after ({dropped_after:.1f} s)"
        assert server.process.poll() is None
        assert query_seconds(server) < 0.5
        for peer in peers:
            peer.close()


def test_worker_connections_are_bounded_whoever_connects_and_their_frames_given_back(tmp_path: Path) -> None:
    # Each backend connection may hold a frame of up to 5.4 MiB while it arrives: 200 such
    # connections from two addresses (no key, no READY) took the coordinator to 1.1 GB, and it
    # kept that memory after they were dropped (attack round 5, H3). At most 40 worker
    # connections are kept by default, wherever they come from.
    with running_server(tmp_path / "data") as server:
        baseline = resident_mb(server.process.pid)
        peers = [RawDealer(server.backend, source=f"127.0.2.{1 + index // 20}", wait=False) for index in range(60)]
        admitted = [peer for peer in peers if not peer.closed_by_server(within=0.3)]
        assert len(admitted) == 40, f"{len(admitted)} worker connections kept"
        for peer in admitted:
            peer.begin_result(5 * MIB)
            assert peer.send_until_refused(5 * MIB - 1) == 5 * MIB - 1
        time.sleep(0.5)
        holding = resident_mb(server.process.pid)
        assert holding < 300, f"{holding:.0f} MB with 40 frames held"
        assert query_seconds(server) < 0.5
        for peer in peers:
            peer.close()
        # Dropped: the heap is trimmed at the next heartbeat.
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and resident_mb(server.process.pid) > baseline + 40:
            time.sleep(0.2)
        released = resident_mb(server.process.pid)
        assert released < baseline + 40, f"{baseline:.0f} MB before, {holding:.0f} MB held, {released:.0f} MB after"
        assert server.process.poll() is None


def test_client_frames_begun_and_never_finished_are_dropped_with_their_bytes(tmp_path: Path) -> None:
    # A client's frame is at most 1 MiB, but hundreds of connections each holding most of one
    # took the coordinator from 101 to 515 MB, for as long as they liked.
    with running_server(tmp_path / "data") as server:
        before = resident_mb(server.process.pid)
        peers = [RawDealer(server.frontend, source=f"127.0.0.{3 + index % 2}") for index in range(64)]
        for peer in peers:
            peer.socket.sendall(bytes([0x03]) + struct.pack(">Q", MIB - 64))
            assert peer.send_until_refused(MIB - 128) == MIB - 128
        time.sleep(1)  # libzmq reads what the kernel holds
        holding = resident_mb(server.process.pid)
        assert holding > before + 8, f"{before:.0f} MB before, {holding:.0f} MB while held: the frames were not held"
        assert query_seconds(server) < 0.5
        # A PING every 5 s, 30 s for anything complete to come back: within 35 s and a margin.
        assert all(peer.closed_by_server(within=50) for peer in peers), "a client stalled mid-frame was kept"
        time.sleep(0.5)
        released = resident_mb(server.process.pid)
        assert released < holding - 8, f"{holding:.0f} MB while held, {released:.0f} MB after"
        assert server.process.poll() is None
        for peer in peers:
            peer.close()


def test_subscriptions_longer_than_any_topic_are_refused(tmp_path: Path, songs: Path) -> None:
    with running_server(tmp_path / "data") as server:
        flooders = [RawDealer(server.events, socket_type=b"SUB") for _ in range(4)]
        sent = [flooder.send_frame(b"\x01" + bytes([65 + index]) * MIB) for index, flooder in enumerate(flooders)]
        assert all(count < 64 * MIB for count in sent)
        assert all(flooder.closed_by_server(within=5) for flooder in flooders)
        before = resident_mb(server.process.pid)
        # The coordinator files subscriptions when it publishes: a song's events.
        with tactus.Client(server.frontend, events=server.events, timeout=10) as client:
            events = client.events()
            time.sleep(0.5)
            song = client.submit(next(songs.glob("*.wav")).read_bytes(), name="flooded.wav", force=True)["song"]
            slowest = 0.0
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                start = time.monotonic()
                client.query(min_bpm=60, max_bpm=200)
                slowest = max(slowest, time.monotonic() - start)
                event = events.next(timeout=0.2)
                if event is not None and event.name == "song.done" and event.body["song"] == song:
                    break
            else:
                raise AssertionError("no song.done")
        grown = resident_mb(server.process.pid) - before
        assert grown < 50, f"the coordinator grew by {grown:.0f} MB"
        assert slowest < 0.5, f"a query took {slowest:.2f} s"
        assert server.process.poll() is None
        for flooder in flooders:
            flooder.close()


def open_descriptors(pid: int) -> int:
    return len(list(Path(f"/proc/{pid}/fd").iterdir()))


def connections_closed_within(sockets: list[socket.socket], seconds: float) -> int:
    """How many of `sockets` the server closes within `seconds`."""
    closed, deadline = 0, time.monotonic() + seconds
    waiting = list(sockets)
    while waiting and time.monotonic() < deadline:
        still = []
        for sock in waiting:
            sock.settimeout(0.01)
            try:
                if sock.recv(4096) == b"":
                    closed += 1
                    continue
            except socket.timeout:
                pass
            except OSError:
                closed += 1
                continue
            still.append(sock)
        waiting = still
        time.sleep(0.1)
    return closed


def test_idle_connections_past_the_limit_are_dropped(tmp_path: Path) -> None:
    # Linux routes all of 127.0.0.0/8 to loopback: the peer is 127.0.0.2, the client 127.0.0.1.
    # 1000 connections that never send a greeting held 19,000 descriptors of one address before.
    with running_server(tmp_path / "data", "--max-connections-per-address", "64") as server, \
            tactus.Client(server.frontend, timeout=10) as client:
        client.query(min_bpm=60, max_bpm=200)
        before = open_descriptors(server.process.pid)
        first = [RawDealer(server.frontend, source="127.0.0.2") for _ in range(64)]
        host, port = server.frontend.removeprefix("tcp://").rsplit(":", 1)
        rest = [socket.create_connection((host, int(port)), timeout=10, source_address=("127.0.0.2", 0)) for _ in range(936)]
        start = time.monotonic()
        client.query(min_bpm=60, max_bpm=200)
        assert time.monotonic() - start < 0.5, "a connected client waited on the flood"
        # Shut down as they are accepted, greeting or not (the handshake timeout is 10 s).
        assert connections_closed_within(rest, 5) == len(rest), "connections past the limit were kept"
        assert not any(peer.closed_by_server(within=0.01) for peer in first), "an admitted connection was dropped"
        held = open_descriptors(server.process.pid) - before
        assert held < 64 + 16, f"the coordinator holds {held} more descriptors"
        assert query_seconds(server) < 0.5
        assert server.process.poll() is None
        for peer in first:
            peer.close()
        for sock in rest:
            sock.close()


def test_all_peers_together_keep_within_a_third_of_the_descriptors(tmp_path: Path) -> None:
    # Many addresses (127.0.0.0/8 has 16 million) each within its limit: together they took all
    # of the coordinator's descriptors. With 600 descriptors, clients may hold 200.
    import resource

    def few_descriptors() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (600, 600))

    with running_server(tmp_path / "data", "--max-connections-per-address", "64", preexec_fn=few_descriptors) as server:
        with tactus.Client(server.frontend, timeout=10) as client:
            client.query(min_bpm=60, max_bpm=200)
            host, port = server.frontend.removeprefix("tcp://").rsplit(":", 1)
            flood = [
                socket.create_connection((host, int(port)), timeout=10, source_address=(f"127.0.1.{index // 60 + 1}", 0))
                for index in range(480)
            ]
            closed = connections_closed_within(flood, 5)
            assert 480 - closed <= 200, f"{480 - closed} connections kept"
            assert open_descriptors(server.process.pid) < 500
            start = time.monotonic()
            client.query(min_bpm=60, max_bpm=200)
            assert time.monotonic() - start < 0.5
            for sock in flood:
                sock.close()
        assert server.process.poll() is None


def test_subscribers_that_come_and_go_leave_nothing_behind(tmp_path: Path) -> None:
    # What every `tactus submit --wait` does once: subscribe, wait for a handshake, leave. An
    # idle server (it publishes nothing meanwhile) kept 17 KB of each until its next event.
    import zmq

    with running_server(tmp_path / "data") as server:
        context = zmq.Context()
        before = resident_mb(server.process.pid)
        for _ in range(2000):
            subscriber = context.socket(zmq.SUB)
            subscriber.setsockopt(zmq.LINGER, 0)
            subscriber.setsockopt(zmq.SUBSCRIBE, b"")
            monitor = subscriber.get_monitor_socket(zmq.EVENT_HANDSHAKE_SUCCEEDED)
            subscriber.connect(server.events)
            assert monitor.poll(5000), "no handshake"
            subscriber.disable_monitor()
            monitor.close()
            subscriber.close()
        time.sleep(1)
        grown = resident_mb(server.process.pid) - before
        context.term()
        assert grown < 10, f"the coordinator grew by {grown:.0f} MB"
        assert server.process.poll() is None


def test_a_local_user_holding_the_loopback_connections_does_not_keep_the_servers_worker_out(tmp_path: Path) -> None:
    # The local worker connects over a Unix socket only the server's user may reach: a local
    # user holding every connection 127.0.0.1 may have kept a restarted worker out for a minute.
    with running_server(tmp_path / "data", "--max-connections-per-address", "16") as server:
        with tactus.Client(server.frontend, timeout=10) as client:
            def worker_ids() -> set[str]:
                return {worker["worker_id"] for worker in client.status().get("server", {}).get("workers", [])}

            deadline = time.monotonic() + 30
            while not worker_ids() and time.monotonic() < deadline:
                time.sleep(0.2)
            first = worker_ids()
            assert len(first) == 1
            # The holders take every connection 127.0.0.1 may hold: all 16, since the worker's
            # does not count.
            holders = [RawDealer(server.backend, wait=False) for _ in range(20)]
            kept = sum(not holder.closed_by_server(within=0.2) for holder in holders)
            assert kept == 16, f"{kept} holders kept"
            os.kill(int(next(iter(first)).rsplit(":", 1)[1]), signal.SIGKILL)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and not (worker_ids() - first):
                time.sleep(0.5)
            assert worker_ids() - first, "the restarted local worker did not join"
            for holder in holders:
                holder.close()
