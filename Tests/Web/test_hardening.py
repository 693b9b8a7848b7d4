"""The web gateway against clients that hold its resources: a connection that never finishes
its request headers is closed after the idle timeout (30 s); event streams are capped (256 at
once, then 503 `busy`; a stream whose client left frees its place at its next write, within
15 s); a standalone `tactus web` asked to stop (SIGTERM) ends its event
streams and exits rather than waiting for their clients to leave.

Run by `make test`; skipped, saying why, without the tactus binary.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import unittest
import urllib.parse

import webserver

#: The gateway's limits (Sources/TactusWeb: WebGateway.idleTimeout, EventHub.maxStreams).
IDLE_TIMEOUT_S = 30
MAX_STREAMS = 256


def open_events(url: str) -> tuple[socket.socket, bytes]:
    """A connection asking for /api/v1/events, and the head of the answer (status line and headers)."""
    parts = urllib.parse.urlsplit(url)
    connection = socket.create_connection((parts.hostname, parts.port), timeout=10)
    connection.sendall(f"GET /api/v1/events HTTP/1.1\r\nHost: {parts.netloc}\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        piece = connection.recv(4096)
        if not piece:
            break
        head += piece
    return connection, head


@unittest.skipIf(webserver.binary() is None, "no tactus binary: build it (swift build) or set TACTUS_BINARY")
class GatewayHardeningTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.server = webserver.WebServer("--no-local-workers")

    @classmethod
    def tearDownClass(cls) -> None:
        cls.server.stop()

    def test_a_connection_that_never_finishes_its_headers_is_closed(self) -> None:
        parts = urllib.parse.urlsplit(self.server.url)
        started = time.monotonic()
        with socket.create_connection((parts.hostname, parts.port), timeout=IDLE_TIMEOUT_S + 15) as slow:
            slow.sendall(b"GET / HTTP/1.1\r\nHo")
            self.assertEqual(slow.recv(4096), b"", "the gateway answered a request whose headers never ended")
        elapsed = time.monotonic() - started
        self.assertLess(elapsed, IDLE_TIMEOUT_S + 10, f"closed after {elapsed:.1f} s")
        # The gateway answers meanwhile and after.
        status, _, _ = self.server.get("/api/v1/detectors")
        self.assertEqual(status, 200)

    def test_event_streams_are_capped(self) -> None:
        streams = []
        try:
            for _ in range(MAX_STREAMS):
                connection, head = open_events(self.server.url)
                streams.append(connection)
                self.assertTrue(head.startswith(b"HTTP/1.1 200"), head[:200])
            connection, head = open_events(self.server.url)
            streams.append(connection)
            self.assertTrue(head.startswith(b"HTTP/1.1 503"), head[:200])
            status, _, body = self.server.get("/api/v1/detectors")
            self.assertEqual(status, 200)
        finally:
            for connection in streams:
                connection.close()
        # Closed streams free their places, each at its next write (a keep-alive every 15 s at most).
        deadline = time.monotonic() + 25
        while True:
            connection, head = open_events(self.server.url)
            connection.close()
            if head.startswith(b"HTTP/1.1 200") or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        self.assertTrue(head.startswith(b"HTTP/1.1 200"), head[:200])

    def test_a_standalone_gateway_stops_with_an_event_stream_open(self) -> None:
        data = os.path.join(self.server.directory, "data")
        with open(os.path.join(data, "endpoints.json")) as file:
            endpoints = json.load(file)
        announce = os.path.join(self.server.directory, "standalone.txt")
        with open(announce, "w") as output:
            web = subprocess.Popen(
                [webserver.binary(), "web", "--listen", "127.0.0.1:0", "--server", endpoints["frontend"],
                 "--events", endpoints["events"], "--log-level", "error"],
                stdout=output, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 30
            url = None
            while url is None and time.monotonic() < deadline:
                with open(announce) as file:
                    for word in file.read().split():
                        if word.startswith("http://"):
                            url = word.rstrip("/")
                time.sleep(0.05)
            self.assertIsNotNone(url, "tactus web did not say where it listens")
            stream, head = open_events(url)
            self.assertTrue(head.startswith(b"HTTP/1.1 200"), head[:200])
            started = time.monotonic()
            web.send_signal(signal.SIGTERM)
            web.wait(timeout=15)
            self.assertLess(time.monotonic() - started, 10)
            self.assertEqual(web.returncode, 0)
            stream.close()
        finally:
            if web.poll() is None:
                web.kill()
                web.wait()


if __name__ == "__main__":
    unittest.main()
