"""The web gateway against clients that hold its resources, and against other sites.

Resources: a connection that never finishes its request headers is closed after the idle
timeout (30 s); event streams are capped (256 at once, then 503 `busy`; a stream whose client
left frees its place at its next write, within 15 s); a standalone `tactus web` asked to stop
(SIGTERM) ends its event streams and exits rather than waiting for their clients to leave;
uploads are capped (4 at once, then 429 `busy` with Retry-After) and spooled as they arrive, so
four parallel uploads of 200 MiB keep the gateway under 300 MB resident.

Other sites: a POST from another origin (`Origin`, `Referer` or `Sec-Fetch-Site` saying so) is
refused 403 unless it carries the token, while same-origin pages and clients that are no browser
(none of those headers) are taken; a `Host` the gateway is not reached by (DNS rebinding) is
refused 421; every answer, unknown routes included, carries the security headers; the login
cookie holds a session identifier, not the token, and is `Secure` behind a TLS proxy; uploads
that are not audio or empty are 415 and 422, with the protocol's error body.

Run by `make test`; skipped, saying why, without the tactus binary.
"""
from __future__ import annotations

import hashlib
import http.client
import json
import os
import shutil
import select
import signal
import socket
import subprocess
import tempfile
import threading
import time
import unittest
import urllib.parse
from pathlib import Path
from typing import Optional

import upload_memory
import webserver

#: The gateway's limits (Sources/TactusWeb: WebGateway.idleTimeout, EventHub.maxStreams,
#: WebConfiguration.maxUploads) and the resident memory it stays under through large uploads.
IDLE_TIMEOUT_S = 30
MAX_STREAMS = 256
MAX_UPLOADS = 4
UPLOAD_MEMORY_LIMIT_MIB = 300
SECURITY_HEADERS = ("X-Frame-Options", "X-Content-Type-Options", "Referrer-Policy")


def send(url: str, method: str, path: str, headers: Optional[dict] = None, body: Optional[bytes] = None,
         host: Optional[str] = None) -> tuple[int, dict, bytes]:
    """One request with exactly these headers (`host`: the Host header, the URL's by default)."""
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    try:
        connection.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        connection.putheader("Host", host or parts.netloc)
        for name, value in (headers or {}).items():
            connection.putheader(name, value)
        if body is not None or method in ("POST", "PUT"):
            connection.putheader("Content-Length", str(len(body or b"")))
        connection.endheaders(body)
        response = connection.getresponse()
        return response.status, dict(response.headers), response.read()
    finally:
        connection.close()


def error_code(body: bytes) -> Optional[str]:
    """The `code` of the protocol's error body, None when the body is not one."""
    try:
        reply = json.loads(body)
    except ValueError:
        return None
    return reply.get("code") if isinstance(reply, dict) and isinstance(reply.get("message"), str) else None


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



@unittest.skipIf(webserver.binary() is None, "no tactus binary: build it (swift build) or set TACTUS_BINARY")
class StoredDurationTests(unittest.TestCase):
    """A song whose stored duration is 1e300 s (a worker's word, stored before its audio facts were
    checked): the pages show it as a dash, the figure is drawn, the gateway goes on. Converting it
    to whole seconds trapped and took the gateway down."""

    def test_a_duration_beyond_any_integer_is_shown_as_a_dash(self) -> None:
        server = webserver.WebServer()
        try:
            with tempfile.TemporaryDirectory() as folder:
                song = server.upload(webserver.click_track(Path(folder) / "clicks.wav", 120))["song"]
            server.wait(song)
            library = os.path.join(server.directory, "data", "library.sqlite")
            subprocess.run(["sqlite3", library, "UPDATE songs SET duration_s = 1e300"], check=True)
            for path in ["/", "/songs/" + song, f"/api/v1/songs/{song}/figure.svg"]:
                status, _, body = server.get(path)
                self.assertEqual(status, 200, f"{path}: {body[:200]!r}")
            _, _, page = server.get("/songs/" + song)
            self.assertIn("<b>–</b><span>duration</span>", page.decode())
        finally:
            server.stop()


class OtherSitesTests(unittest.TestCase):
    """A gateway without a token (the default, on loopback), and one with a token."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.server = webserver.WebServer("--no-local-workers", "--allowed-host", "tactus.example")
        cls.songs = Path(tempfile.mkdtemp(prefix="tactus-hardening-songs-"))
        cls.count = 0

    @classmethod
    def tearDownClass(cls) -> None:
        cls.server.stop()
        shutil.rmtree(cls.songs, ignore_errors=True)

    def song(self) -> bytes:
        """The bytes of a short WAV song not sent before."""
        OtherSitesTests.count += 1
        return webserver.click_track(self.songs / f"click-{self.count}.wav", 90 + self.count, seconds=2).read_bytes()

    def post_song(self, headers: dict, url: Optional[str] = None) -> tuple[int, bytes, str]:
        """POSTs a new song with `headers`; (status, body, the song's id)."""
        song = self.song()
        status, _, body = send(url or self.server.url, "POST", "/api/v1/songs?name=song.wav", headers, song)
        return status, body, hashlib.sha256(song).hexdigest()

    def assert_not_stored(self, song: str) -> None:
        status, _, body = self.server.get("/api/v1/status?song=" + song)
        self.assertEqual((status, error_code(body)), (404, "not-found"), body[:300])

    def test_a_post_from_another_site_is_refused_and_nothing_stored(self) -> None:
        origin = self.server.url
        for headers in (
            # A page of another site posting text/plain, which needs no CORS preflight.
            {"Origin": "http://evil.example", "Content-Type": "text/plain"},
            {"Origin": "null", "Content-Type": "text/plain"},
            {"Origin": origin + ".evil.example", "Content-Type": "text/plain"},
            {"Origin": origin.replace("127.0.0.1", "localhost"), "Content-Type": "text/plain"},
            {"Sec-Fetch-Site": "cross-site", "Origin": "http://evil.example"},
            {"Sec-Fetch-Site": "same-site", "Content-Type": "text/plain"},
            {"Referer": "http://evil.example/page.html", "Content-Type": "text/plain"},
        ):
            with self.subTest(headers=headers):
                status, body, song = self.post_song(headers)
                self.assertEqual((status, error_code(body)), (403, "forbidden"), body[:300])
                self.assertIn("another", json.loads(body)["message"])
                self.assert_not_stored(song)

    def test_same_origin_pages_and_clients_that_are_no_browser_are_taken(self) -> None:
        origin = self.server.url
        for headers in (
            {"Origin": origin, "Content-Type": "application/octet-stream"},
            {"Sec-Fetch-Site": "same-origin", "Origin": origin},
            {"Referer": origin + "/queue"},
            {},  # curl, the Python client, a script
        ):
            with self.subTest(headers=headers):
                status, body, song = self.post_song(headers)
                self.assertEqual(status, 202, body[:300])
                self.assertEqual(json.loads(body)["song"], song)

    def test_only_the_gateways_own_host_names_are_answered(self) -> None:
        port = urllib.parse.urlsplit(self.server.url).port
        for host in ("evil.example", f"evil.example:{port}", "127.0.0.1.evil.example", "localhost.evil.example", "[::1"):
            with self.subTest(host=host):
                status, headers, body = send(self.server.url, "GET", "/api/v1/songs", host=host)
                self.assertEqual((status, error_code(body)), (421, "forbidden"), body[:300])
                self.assertNotIn(b"songs", body)
                for name in SECURITY_HEADERS:
                    self.assertIn(name, headers)
                status, _, body = send(self.server.url, "GET", "/", host=host)
                self.assertEqual(status, 421)
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", "LocalHost", f"[::1]:{port}", "tactus.example"):
            with self.subTest(host=host):
                status, _, body = send(self.server.url, "GET", "/api/v1/songs", host=host)
                self.assertEqual(status, 200, body[:300])

    def test_unmatched_routes_carry_the_security_headers(self) -> None:
        for method, path, status, code in (
            ("GET", "/nowhere", 404, None),
            ("GET", "/api/v2/songs", 404, "not-found"),
            ("PUT", "/api/v1/songs", 404, "not-found"),
            ("DELETE", "/api/v1/status", 404, "not-found"),
            ("PUT", "/queue", 404, None),
            ("HEAD", "/", 404, None),
            ("HEAD", "/api/v1/songs", 404, None),
        ):
            with self.subTest(method=method, path=path):
                answer, headers, body = send(self.server.url, method, path)
                self.assertEqual(answer, status, body[:300])
                self.assertEqual(headers.get("X-Frame-Options"), "DENY")
                self.assertEqual(headers.get("X-Content-Type-Options"), "nosniff")
                self.assertEqual(headers.get("Referrer-Policy"), "same-origin")
                if code:
                    self.assertEqual(error_code(body), code, body[:300])
                if method == "HEAD":
                    self.assertEqual(body, b"")

    def test_uploads_that_are_not_audio_or_empty_get_415_and_422(self) -> None:
        for name, data, status, code in (
            ("notes.txt", b"not audio at all, just text\n" * 40, 415, "unsupported-format"),
            ("random.mp3", bytes((index * 7919) % 251 for index in range(100_000)), 415, "unsupported-format"),
            ("empty.wav", b"", 422, "empty"),
        ):
            with self.subTest(name=name):
                answer, headers, body = send(self.server.url, "POST", f"/api/v1/songs?name={name}",
                                             {"Content-Type": "application/octet-stream"}, data)
                self.assertEqual((answer, error_code(body)), (status, code), body[:300])
                self.assertTrue(headers.get("Content-Type", "").startswith("application/json"))
                self.assertIn(name, json.loads(body)["message"])

    def test_with_a_token_the_cookie_is_a_session_and_other_sites_need_the_token(self) -> None:
        token = "t0ken-of-the-hardening-tests-0123456789"
        token_file = self.songs / "token"
        token_file.write_text(token + "\n")
        server = webserver.WebServer("--no-local-workers", "--web-token-file", str(token_file))
        try:
            form = urllib.parse.urlencode({"token": token, "next": "/queue"}).encode()
            form_type = {"Content-Type": "application/x-www-form-urlencoded"}
            status, headers, _ = send(server.url, "POST", "/login", form_type, form)
            self.assertEqual(status, 303)
            cookie = headers["Set-Cookie"]
            name, value = cookie.split(";")[0].split("=", 1)
            self.assertNotIn(token, cookie)
            self.assertGreaterEqual(len(value), 32)
            self.assertIn("HttpOnly", cookie)
            self.assertIn("SameSite=Strict", cookie)
            self.assertNotIn("Secure", cookie)
            # The session opens the pages and the API; the token in the cookie opens nothing.
            self.assertEqual(send(server.url, "GET", "/api/v1/status", {"Cookie": f"{name}={value}"})[0], 200)
            self.assertEqual(send(server.url, "GET", "/api/v1/status", {"Cookie": f"{name}={token}"})[0], 401)
            self.assertEqual(send(server.url, "GET", "/api/v1/status", {"Cookie": f"tactus_token={token}"})[0], 401)
            self.assertEqual(send(server.url, "GET", "/api/v1/status", {"Cookie": f"{name}={'0' * 64}"})[0], 401)
            # Behind a proxy that says the request came over TLS, the cookie is Secure.
            status, headers, _ = send(server.url, "POST", "/login", {**form_type, "X-Forwarded-Proto": "https"}, form)
            self.assertEqual(status, 303)
            self.assertIn("; Secure", headers["Set-Cookie"])
            status, headers, _ = send(server.url, "POST", "/login", {**form_type, "Forwarded": "for=10.0.0.1;proto=https"}, form)
            self.assertIn("; Secure", headers["Set-Cookie"])
            # Another site's page sends the cookie along, but not the token: refused. The token is taken from anywhere.
            cross = {"Origin": "http://evil.example", "Content-Type": "text/plain"}
            status, body, song = self.post_song({**cross, "Cookie": f"{name}={value}"}, url=server.url)
            self.assertEqual((status, error_code(body)), (403, "forbidden"), body[:300])
            status, body, song = self.post_song({**cross, "Authorization": f"Bearer {token}"}, url=server.url)
            self.assertEqual(status, 202, body[:300])
            status, body, song = self.post_song({"Origin": server.url, "Cookie": f"{name}={value}"}, url=server.url)
            self.assertEqual(status, 202, body[:300])
            # A login form posted from another site is refused too.
            status, _, _ = send(server.url, "POST", "/login", {**form_type, "Origin": "http://evil.example"}, form)
            self.assertEqual(status, 403)
        finally:
            server.stop()


def stalled_upload(url: str, length: int) -> socket.socket:
    """A connection that announces a song of `length` bytes, sends 1 KiB of it and waits."""
    parts = urllib.parse.urlsplit(url)
    connection = socket.create_connection((parts.hostname, parts.port), timeout=30)
    connection.sendall(f"POST /api/v1/songs?name=stalled.wav HTTP/1.1\r\nHost: {parts.netloc}\r\n"
                       f"Content-Type: application/octet-stream\r\nContent-Length: {length}\r\n\r\n".encode()
                       + upload_memory.wav_header(length) + bytes(980))
    return connection


@unittest.skipIf(webserver.binary() is None, "no tactus binary: build it (swift build) or set TACTUS_BINARY")
class UploadLimitTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.server = webserver.WebServer("--no-local-workers")
        cls.gateway = upload_memory.gateway_pid(cls.server.process.pid)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.server.stop()

    def test_uploads_past_the_cap_are_told_busy(self) -> None:
        song = upload_memory.wav_header(50_044) + bytes(50_000)

        def upload_until(name: str, wanted: int, before_each=lambda: None) -> tuple[int, dict, bytes]:
            """Uploads the song until it is answered `wanted` (10 s at most); the last answer."""
            deadline = time.monotonic() + 10
            while True:
                before_each()
                answer = send(self.server.url, "POST", "/api/v1/songs?name=" + name,
                              {"Content-Type": "application/octet-stream"}, song)
                if answer[0] == wanted or time.monotonic() > deadline:
                    return answer
                time.sleep(0.05)

        stalled = [stalled_upload(self.server.url, 50 << 20) for _ in range(MAX_UPLOADS)]

        def replace_refused() -> None:
            """A stalled upload whose head the gateway read while a probe held the last place was
            refused (busy): it holds no place, so another takes its turn."""
            for index, connection in enumerate(stalled):
                readable, _, _ = select.select([connection], [], [], 0)
                if readable:
                    connection.close()
                    stalled[index] = stalled_upload(self.server.url, 50 << 20)

        try:
            # The stalled uploads hold their places once the gateway has read their heads; until
            # then one more upload is taken (and gives its place back as it ends).
            status, headers, body = upload_until("one-too-many.wav", 429, before_each=replace_refused)
            self.assertEqual((status, error_code(body)), (429, "busy"), body[:300])
            self.assertGreaterEqual(int(headers["Retry-After"]), 1)
            self.assertGreater(json.loads(body)["retry_after_ms"], 0)
            # The rest of the gateway answers meanwhile.
            self.assertEqual(self.server.get("/api/v1/status")[0], 200)
        finally:
            for connection in stalled:
                connection.close()
        # Uploads whose clients left give their places back.
        status, _, body = upload_until("after.wav", 202)
        self.assertEqual(status, 202, body[:300])

    def test_an_upload_that_stops_sending_is_given_up_and_its_place_freed(self) -> None:
        """Clients that announce songs and then send nothing, or a byte every 5 s, hold the
        places for uploads only until fewer than 64 KiB have come in 30 s: then their uploads
        are given up (the connection closed, or answered 408) and the places are free again
        (before, they were held for as long as the clients kept the connections)."""
        song = upload_memory.wav_header(50_044) + bytes(50_000)

        def upload(name: str) -> tuple[int, dict, bytes]:
            return send(self.server.url, "POST", "/api/v1/songs?name=" + name, {"Content-Type": "application/octet-stream"}, song)

        # The places of an earlier test's uploads are free once an upload is taken again.
        deadline = time.monotonic() + 30
        while upload("before-stall.wav")[0] != 202 and time.monotonic() < deadline:
            time.sleep(0.2)
        started = time.monotonic()
        stalled = [stalled_upload(self.server.url, 50 << 20) for _ in range(MAX_UPLOADS)]
        trickling = threading.Event()

        def trickle(connection: socket.socket) -> None:
            while not trickling.wait(5):
                try:
                    connection.sendall(b"\0")
                except OSError:
                    return

        for connection in stalled[:2]:
            threading.Thread(target=trickle, args=(connection,), daemon=True).start()
        try:
            held = 0
            for connection in stalled:
                connection.settimeout(60)
                answer = b""
                while True:
                    received = connection.recv(65536)
                    if not received:
                        held += 1  # closed without an answer: it held a place and was given up
                        break
                    answer += received
                    if answer.startswith(b"HTTP/1.1 408"):
                        held += 1  # given up with an answer (the gateway then waits for the body's rest)
                        break
                    if answer.startswith(b"HTTP/1.1 429"):
                        break  # refused at once (its head came while the places were taken): it held none
            waited = time.monotonic() - started
            self.assertGreaterEqual(held, 1)
            self.assertGreater(waited, 25)
            self.assertLess(waited, 50)
            status, _, body = upload("after-stall.wav")
            self.assertEqual(status, 202, body[:300])
        finally:
            trickling.set()
            for connection in stalled:
                connection.close()

    def test_uploads_past_the_bytes_in_flight_are_told_busy(self) -> None:
        data = os.path.join(self.server.directory, "data")
        with open(os.path.join(data, "endpoints.json")) as file:
            endpoints = json.load(file)
        announce = os.path.join(self.server.directory, "bytes-in-flight.json")
        web = subprocess.Popen(
            [webserver.binary(), "web", "--listen", "127.0.0.1:0", "--server", endpoints["frontend"],
             "--events", endpoints["events"], "--max-upload-bytes-in-flight", "1000000", "--announce-file", announce,
             "--log-level", "error"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 30
            while not os.path.exists(announce):
                self.assertLess(time.monotonic(), deadline, "tactus web did not say where it listens")
                self.assertIsNone(web.poll(), "tactus web exited")
                time.sleep(0.05)
            with open(announce) as file:
                url = json.load(file)["url"].rstrip("/")
            # Over the bytes in flight: with a length, told at once; chunked, once its bytes pass it.
            for chunked in (False, True):
                with self.subTest(chunked=chunked):
                    status, headers, body = upload_memory.post_song(url, 2_000_000, 900 + chunked, chunked)
                    self.assertEqual((status, error_code(body)), (429, "busy"), body[:300])
                    self.assertIn("1000000 bytes", json.loads(body)["message"])
                    self.assertIn("Retry-After", headers)
            status, _, body = upload_memory.post_song(url, 600_000, 902, True)
            self.assertEqual(status, 202, body[:300])
        finally:
            web.terminate()
            web.wait(timeout=20)

    def test_four_parallel_uploads_of_200_mib_keep_the_gateway_under_300_mb(self) -> None:
        size = 200 << 20
        for chunked in (True, False):
            with self.subTest(chunked=chunked):
                answers = upload_memory.parallel_uploads(self.server.url, MAX_UPLOADS, size, chunked,
                                                         first_seed=10 + (MAX_UPLOADS if chunked else 0))
                for answer in answers:
                    self.assertNotIsInstance(answer, Exception)
                    status, _, body = answer
                    self.assertEqual(status, 202, body[:300])
                peak = upload_memory.memory_mib(self.gateway)["VmHWM"]
                self.assertLess(peak, UPLOAD_MEMORY_LIMIT_MIB, f"the gateway's peak resident memory: {peak:.0f} MiB")

if __name__ == "__main__":
    unittest.main()
