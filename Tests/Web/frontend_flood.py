#!/usr/bin/env python3
"""The coordinator's memory and answers while many connections send it large messages at once.

    python3 Tests/Web/frontend_flood.py oversized [--connections 100] [--mib 60]
    python3 Tests/Web/frontend_flood.py inline    [--connections 400] [--mib 16]
    python3 Tests/Web/frontend_flood.py at-limit  [--connections 400] [--mib 1]
    python3 Tests/Web/frontend_flood.py pipelined [--connections 1] [--messages 1000] [--mib 1]
    python3 Tests/Web/frontend_flood.py many-frames [--connections 1] [--frames 400] [--mib 1]

Starts `tactus serve --no-web` ($TACTUS_BINARY, else this checkout's debug build) with its
default settings on free loopback ports (extra `serve` options after `--`), waits until it is
idle, then opens `--connections` connections and, once all are connected, sends on each at once:

- `oversized`: a `submit` whose song frame is `--mib` MiB of junk (over any inline limit);
- `inline`: a `submit` of a valid WAV of `--mib` MiB, different on each connection;
- `at-limit`: a `submit` of a valid WAV just under `--mib` MiB (the largest frame a server takes);
- `pipelined`: `--messages` `submit`s of `--mib` MiB each, without waiting for the answers;
- `many-frames`: one `submit` with `--frames` frames of `--mib` MiB after its body (libzmq's
  limit is per frame, and it holds a message until its last frame: this one it holds whole).

Meanwhile another client asks `status` every 0.2 s and times each answer. Prints the
coordinator's resident memory (VmRSS) when idle, its peak (the most sampled every 20 ms, and
VmHWM), the answers, the slowest `status`, and VmRSS once the attack's connections are closed
and `--settle` seconds have passed. Exits 1 when the peak passes `--limit-mb` (512), the slowest
status `--status-limit-s` (1) or the memory after the flood its idle size by `--after-limit-mb` (100).
"""
from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import struct
import subprocess
import sys
import tempfile
import threading
import time
import shutil

import zmq

import webserver
from upload_memory import memory_mib


def binary() -> str:
    path = webserver.binary()
    if path is None:
        sys.exit("no tactus binary: build it (swift build --product tactus) or set TACTUS_BINARY")
    return path


def wav(size: int, seed: int, rate: int = 22050) -> bytes:
    """A mono 16-bit WAV file of `size` bytes in all: quiet noise, different for each `seed`."""
    data = size - 44
    header = (b"RIFF" + struct.pack("<I", size - 8) + b"WAVEfmt " + struct.pack("<IHHIIHH", 16, 1, 1, rate, rate * 2, 2, 16)
              + b"data" + struct.pack("<I", data))
    block = struct.pack("<Q", seed) + bytes((seed * 7 + index * 13) % 5 for index in range(65528))
    return header + (block * (data // len(block) + 1))[:data]


class Server:
    """`tactus serve --no-web` on free loopback ports in a temporary directory."""

    def __init__(self, extra: list[str]) -> None:
        self.directory = tempfile.mkdtemp(prefix="tactus-flood-")
        data = os.path.join(self.directory, "data")
        self.process = subprocess.Popen(
            [binary(), "serve", "--data", data, "--no-web", "--log-level", "error",
             "--frontend", "tcp://127.0.0.1:*", "--backend", "tcp://127.0.0.1:*", "--events", "tcp://127.0.0.1:*", *extra],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        announcement = os.path.join(data, "endpoints.json")
        deadline = time.monotonic() + 60
        while not os.path.exists(announcement) or os.path.getsize(announcement) == 0:
            if time.monotonic() > deadline or self.process.poll() is not None:
                self.stop()
                raise RuntimeError("tactus serve did not start")
            time.sleep(0.05)
        with open(announcement) as file:
            self.frontend: str = json.load(file)["frontend"]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.directory, ignore_errors=True)


def request(command: bytes, request_id: bytes, body: dict, *binary: bytes) -> list:
    return [b"", b"TACTUS1", command, request_id, json.dumps(body).encode(), *binary]


class StatusProbe:
    """Asks `status` every 0.2 s from a process of its own (the attack's threads hold Python's
    lock while they build songs, which would delay this client's reads), and keeps each wait."""

    def __init__(self, frontend: str) -> None:
        self.stopping = multiprocessing.Event()
        self.results = multiprocessing.Queue()
        self.process = multiprocessing.Process(target=self.run, args=(frontend, self.stopping, self.results), daemon=True)
        self.waits: list[float] = []
        self.unanswered = 0

    def start(self) -> None:
        self.process.start()

    def stop(self) -> None:
        self.stopping.set()
        self.waits, self.unanswered = self.results.get(timeout=60)
        self.process.join()

    @staticmethod
    def run(frontend: str, stopping, results) -> None:  # type: ignore[no-untyped-def]
        context = zmq.Context()
        socket = context.socket(zmq.DEALER)
        socket.setsockopt(zmq.LINGER, 0)
        socket.connect(frontend)
        waits, unanswered, counter = [], 0, 0
        while not stopping.is_set():
            counter += 1
            request_id = b"status-%d" % counter
            started = time.monotonic()
            socket.send_multipart(request(b"status", request_id, {}))
            answered = False
            while time.monotonic() - started < 30:
                if socket.poll(100):
                    frames = socket.recv_multipart()
                    if frames[3] == request_id:
                        answered = True
                        break
            if answered:
                waits.append(time.monotonic() - started)
            else:
                unanswered += 1
            time.sleep(0.2)
        socket.close()
        context.term()
        results.put((waits, unanswered))


class Sampler(threading.Thread):
    """The most VmRSS seen, sampled every 20 ms."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.peak = 0.0
        self.running = True

    def run(self) -> None:
        while self.running:
            self.peak = max(self.peak, memory_mib(self.pid)["VmRSS"])
            time.sleep(0.02)


def attack(frontend: str, arguments: argparse.Namespace) -> dict:
    """Connects every attacking socket, sends on all at once, and gathers the answers."""
    context = zmq.Context(io_threads=4)
    sockets = []
    for _ in range(arguments.connections):
        socket = context.socket(zmq.DEALER)
        socket.setsockopt(zmq.LINGER, 0)
        socket.setsockopt(zmq.RECONNECT_IVL, -1)  # a dropped connection stays dropped
        socket.setsockopt(zmq.SNDHWM, 0)
        socket.connect(frontend)
        sockets.append(socket)
    time.sleep(1)  # every handshake done
    size = int(arguments.mib * (1 << 20))
    if arguments.kind in ("at-limit", "many-frames"):
        size -= 4096  # room for nothing else: the song frame itself is what is limited
    junk = bytes(size) if arguments.kind in ("oversized", "many-frames") else None
    copies = arguments.frames if arguments.kind == "many-frames" else 1
    messages = arguments.messages if arguments.kind == "pipelined" else 1
    barrier = threading.Barrier(len(sockets))
    sent = [0]
    lock = threading.Lock()

    def send(index: int, socket: zmq.Socket) -> None:
        for message in range(messages):
            seed = index * messages + message
            song = junk if junk is not None else wav(size, seed)
            frames = request(b"submit", b"flood-%d" % seed, {"name": f"flood-{seed}.wav"}, *([song] * copies))
            if message == 0:
                barrier.wait()
            socket.send_multipart(frames, copy=False)
            with lock:
                sent[0] += 1

    threads = [threading.Thread(target=send, args=(index, socket)) for index, socket in enumerate(sockets)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    tally: dict = {}
    deadline = time.monotonic() + arguments.wait
    expected = len(sockets) * messages
    answered = 0
    poller = zmq.Poller()
    for socket in sockets:
        poller.register(socket, zmq.POLLIN)
    while answered < expected and time.monotonic() < deadline:
        for socket, _ in poller.poll(200):
            while True:
                try:
                    frames = socket.recv_multipart(zmq.NOBLOCK)
                except zmq.Again:
                    break
                answered += 1
                status, body = frames[4].decode(), json.loads(frames[5])
                key = "ok" if status == "ok" else f"error {body.get('code')}"
                tally[key] = tally.get(key, 0) + 1
    tally["no answer"] = expected - answered
    for socket in sockets:
        socket.close()
    context.term()
    return tally


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("kind", choices=["oversized", "inline", "at-limit", "pipelined", "many-frames"])
    parser.add_argument("--connections", type=int)
    parser.add_argument("--mib", type=float)
    parser.add_argument("--messages", type=int, default=1000)
    parser.add_argument("--frames", type=int, default=400)
    parser.add_argument("--wait", type=float, default=60, help="seconds to wait for the answers")
    parser.add_argument("--settle", type=float, default=15, help="seconds between the attack's end and the last figure")
    parser.add_argument("--limit-mb", type=float, default=512)
    parser.add_argument("--status-limit-s", type=float, default=1)
    parser.add_argument("--after-limit-mb", type=float, default=100)
    parser.add_argument("serve", nargs="*", help="options for tactus serve (after --)")
    arguments = parser.parse_args()
    defaults = {"oversized": (100, 60), "inline": (400, 16), "at-limit": (400, 1), "pipelined": (1, 1), "many-frames": (1, 1)}[arguments.kind]
    arguments.connections = arguments.connections or defaults[0]
    arguments.mib = arguments.mib or defaults[1]

    server = Server(arguments.serve)
    try:
        pid = server.process.pid
        time.sleep(3)
        idle = memory_mib(pid)["VmRSS"]
        print(f"binary {binary()}, coordinator pid {pid}, frontend {server.frontend}")
        print(f"{arguments.kind}: {arguments.connections} connections x {arguments.mib:g} MiB"
              + (f" x {arguments.messages} messages" if arguments.kind == "pipelined" else "")
              + (f" x {arguments.frames} frames" if arguments.kind == "many-frames" else ""))
        print(f"idle: VmRSS {idle:.0f} MiB")
        sampler, probe = Sampler(pid), StatusProbe(server.frontend)
        sampler.start()
        probe.start()
        started = time.monotonic()
        tally = attack(server.frontend, arguments)
        attacked = time.monotonic() - started
        time.sleep(1)
        probe.stop()
        sampler.running = False
        sampler.join()
        figures = memory_mib(pid)
        peak = max(sampler.peak, figures["VmRSS"])
        print(f"answers in {attacked:.1f} s: " + ", ".join(f"{key} {count}" for key, count in sorted(tally.items())))
        print(f"peak: VmRSS {peak:.0f} MiB sampled, VmHWM {figures['VmHWM']:.0f} MiB")
        slowest = max(probe.waits) if probe.waits else float("inf")
        waits = sorted(probe.waits)
        median = waits[len(waits) // 2] if waits else float("inf")
        print(f"status from another client: {len(probe.waits)} answered, {probe.unanswered} unanswered, "
              f"median {median:.3f} s, slowest {slowest:.3f} s")
        time.sleep(arguments.settle)
        after = memory_mib(pid)["VmRSS"]
        print(f"{arguments.settle:g} s after: VmRSS {after:.0f} MiB ({after - idle:+.0f} MiB over idle)")
        failed = []
        if max(peak, figures["VmHWM"]) > arguments.limit_mb:
            failed.append(f"peak over {arguments.limit_mb:g} MiB")
        if slowest > arguments.status_limit_s or probe.unanswered:
            failed.append(f"status slower than {arguments.status_limit_s:g} s")
        if after - idle > arguments.after_limit_mb:
            failed.append(f"memory after over idle by more than {arguments.after_limit_mb:g} MiB")
        print("FAILED: " + "; ".join(failed) if failed else "within the limits")
        return 1 if failed else 0
    finally:
        server.stop()


if __name__ == "__main__":
    sys.exit(main())
