"""The OpenAPI document of `tactus web` (/api/v1/openapi.yaml) is a valid OpenAPI 3.1 document,
and real responses of a real server, for every operation it names, match the schemas it gives
for their status and content type (JSON bodies validated with jsonschema, Server-Sent Events'
data with the event schemas).

Run by `make test` (python3 -m unittest discover Tests/Web); skipped, saying why, without PyYAML
or jsonschema, or without the tactus binary.
"""
from __future__ import annotations

import json
import re
import socket
import tempfile
import unittest
import urllib.parse
from pathlib import Path

import webserver

try:
    import jsonschema
    import yaml
except ImportError as missing:  # pragma: no cover - reported as a skip
    jsonschema = yaml = None
    MISSING = f"needs PyYAML and jsonschema ({missing}); make deps installs them"
else:
    MISSING = None


@unittest.skipIf(MISSING is not None, MISSING or "")
@unittest.skipIf(webserver.binary() is None, "no tactus binary: build it (swift build) or set TACTUS_BINARY")
class OpenAPITests(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.server = webserver.WebServer()
        cls.songs = Path(tempfile.mkdtemp(prefix="tactus-openapi-songs-"))
        status, _, body = cls.server.get("/api/v1/openapi.yaml")
        assert status == 200, status
        cls.spec = yaml.safe_load(body)
        cls.checked = set()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.server.stop()

    def operation(self, method: str, path: str) -> dict:
        for template, item in self.spec["paths"].items():
            pattern = "^" + re.sub(r"\{[^}]+\}", "[^/]+", re.escape(template).replace(r"\{", "{").replace(r"\}", "}")) + "$"
            if re.match(pattern, path) and method in item:
                return item[method]
        self.fail(f"{method.upper()} {path} is not in the OpenAPI document")

    def check(self, method: str, url_path: str, status: int, headers: dict, body: bytes) -> None:
        """Validates one real response against the document."""
        path = urllib.parse.urlparse(url_path).path
        operation = self.operation(method, path)
        self.checked.add(operation["operationId"])
        responses = operation["responses"]
        response = responses.get(str(status)) or responses.get("default")
        self.assertIsNotNone(response, f"{method.upper()} {path}: status {status} is not documented")
        if "$ref" in response:
            response = self.spec["components"]["responses"][response["$ref"].split("/")[-1]]
        content_type = headers.get("Content-Type", "").split(";")[0].strip()
        self.assertIn(content_type, response["content"], f"{method.upper()} {path} {status}: content type {content_type}")
        schema = response["content"][content_type]["schema"]
        if content_type == "application/json":
            self.validate(json.loads(body), schema, f"{method.upper()} {url_path} {status}")
        else:
            self.assertEqual(schema.get("type"), "string")

    def validate(self, instance: object, schema: dict, where: str) -> None:
        root = dict(schema)
        root["components"] = self.spec["components"]
        validator = jsonschema.Draft202012Validator(root)
        errors = sorted(validator.iter_errors(instance), key=lambda error: list(error.path))
        self.assertEqual([], [f"{list(error.path)}: {error.message}" for error in errors[:5]], where)

    def call(self, method: str, path: str, expected: int, data: bytes = None, headers: dict = None) -> bytes:
        status, response_headers, body = webserver.request(self.server.url + path, data=data, headers=headers,
                                                           method=method.upper())
        self.assertEqual(expected, status, f"{method.upper()} {path}: {body[:300]!r}")
        self.check(method, path, status, response_headers, body)
        return body

    def test_the_document_is_valid_openapi(self) -> None:
        self.assertEqual(self.spec["openapi"], "3.1.0")
        try:
            from openapi_spec_validator import validate
        except ImportError:
            self.skipTest("openapi-spec-validator is not installed: the document's structure is not checked")
        validate(self.spec)

    @staticmethod
    def workout(strides: int, seconds: int) -> bytes:
        """A TCX running activity of `seconds` at `strides` strides per minute (RunCadence), one point a second."""
        points = "".join(
            f"<Trackpoint><Time>2026-01-01T08:{t // 60:02d}:{t % 60:02d}Z</Time>"
            f"<DistanceMeters>{t * 3.0:.1f}</DistanceMeters><HeartRateBpm><Value>150</Value></HeartRateBpm>"
            f"<Extensions><ns3:TPX><ns3:RunCadence>{strides}</ns3:RunCadence></ns3:TPX></Extensions></Trackpoint>"
            for t in range(seconds))
        return (
            '<?xml version="1.0" encoding="UTF-8"?><TrainingCenterDatabase '
            'xmlns="http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2" '
            'xmlns:ns3="http://www.garmin.com/xmlschemas/ActivityExtension/v2"><Activities><Activity Sport="Running">'
            '<Id>2026-01-01T08:00:00Z</Id><Lap StartTime="2026-01-01T08:00:00Z"><Track>'
            + points + "</Track></Lap></Activity></Activities></TrainingCenterDatabase>").encode()

    def test_real_responses_match_the_document(self) -> None:
        events = self.follow_events()
        song = webserver.click_track(self.songs / "click-128.wav", 128)
        submitted = json.loads(self.call("post", "/api/v1/songs?name=click-128.wav", 202, data=song.read_bytes(),
                                         headers={"Content-Type": "application/octet-stream"}))
        self.server.wait(submitted["song"])
        song_id = submitted["song"]
        self.call("get", "/api/v1/songs", 200)
        self.call("get", "/api/v1/songs?min_bpm=120&max_bpm=136&octave=true&order=newest&limit=5", 200)
        steady = json.loads(self.call("get", "/api/v1/songs?stable=true", 200))["songs"]
        self.assertEqual([song_id], [song["song"] for song in steady], "a click track keeps one tempo")
        self.assertEqual([], json.loads(self.call("get", "/api/v1/songs?stable=false", 200))["songs"])
        self.call("get", "/api/v1/songs/" + song_id, 200)
        self.call("get", f"/api/v1/songs/{song_id}/result?windows=true", 200)
        self.call("get", f"/api/v1/songs/{song_id}/figure.svg", 200)
        self.call("get", "/api/v1/compare?bin_width=5", 200)
        self.call("get", "/api/v1/playlist?cadence=128&minutes=0.1", 200)
        self.call("get", "/api/v1/playlist?profile=1m@128&format=m3u8", 200)
        # The uploaded song has no path: the collection leaves it out and counts it.
        status, headers, body = webserver.request(self.server.url + "/api/v1/export/rekordbox.xml?min_bpm=120&max_bpm=136")
        self.assertEqual(200, status)
        self.assertEqual("1", {name.lower(): value for name, value in headers.items()}.get("tactus-omitted"))
        self.assertIn(b'<COLLECTION Entries="0">', body)
        self.assertIn(b'Name="Tactus 120-136 BPM"', body)
        self.call("get", "/api/v1/export/rekordbox.xml", 200)
        # A song-list parameter the export does not apply is refused, naming it, not ignored.
        refused = json.loads(self.call("get", "/api/v1/export/rekordbox.xml?limit=10", 400))
        self.assertEqual("bad-request", refused["code"])
        self.assertTrue(refused["message"].startswith("limit: "), refused)
        self.call("get", "/api/v1/status", 200)
        self.call("get", "/api/v1/status?song=" + song_id, 200)
        self.call("get", "/api/v1/detectors", 200)
        self.call("get", "/api/v1/openapi.yaml", 200)
        self.call("get", "/metrics", 200)
        self.call("post", "/api/v1/playlist?name=run.tcx", 200, data=self.workout(strides=64, seconds=180),
                  headers={"Content-Type": "application/octet-stream"})
        # Errors are documented too.
        self.call("post", "/api/v1/playlist?name=empty.tcx", 422, data=b"", headers={"Content-Type": "application/octet-stream"})
        self.call("get", "/api/v1/songs?min_bpm=300&max_bpm=100", 400)
        self.call("get", "/api/v1/songs/" + "0" * 64, 404)
        self.call("get", "/api/v1/songs/" + "0" * 64 + "/result", 404)
        self.call("get", "/api/v1/compare?bin_width=0", 400)
        self.call("get", "/api/v1/playlist?cadence=0", 400)
        self.call("get", "/api/v1/status?job=999999", 404)
        self.call("post", "/api/v1/songs?name=nothing.wav", 422, data=b"")
        self.call("post", "/api/v1/songs?name=notes.txt", 415, data=b"not audio, just text" * 10)
        self.call("post", "/api/v1/songs?name=click-128.wav", 403, data=b"RIFF",
                  headers={"Origin": "http://evil.example", "Content-Type": "text/plain"})
        # The events of the upload arrived as Server-Sent Events whose data match the event schemas.
        received = events()
        self.assertIn("song.done", [name for name, _ in received])
        for name, data in received:
            self.validate(json.loads(data), {"$ref": f"#/components/schemas/event.{name}"}, f"event {name}")
        self.checked.add("events")
        every = {operation["operationId"] for item in self.spec["paths"].values() for operation in item.values()}
        self.assertEqual(set(), every - self.checked, "operations without a real response checked")

    def follow_events(self):
        """Starts reading /api/v1/events on a raw socket; the returned function collects the
        events read until song.done (or 120 s)."""
        parsed = urllib.parse.urlparse(self.server.url)
        connection = socket.create_connection((parsed.hostname, parsed.port), timeout=120)
        connection.sendall(f"GET /api/v1/events HTTP/1.1\r\nHost: {parsed.netloc}\r\nAccept: text/event-stream\r\n\r\n".encode())
        buffer = b""
        while b"connected to" not in buffer:  # the stream is open before the song is sent
            buffer += connection.recv(4096)
        head = buffer.split(b"\r\n\r\n", 1)[0].decode()
        self.assertIn("200", head.split("\r\n")[0])
        self.assertIn("text/event-stream", head.lower())
        operation = self.operation("get", "/api/v1/events")
        self.assertIn("text/event-stream", operation["responses"]["200"]["content"])

        def collect():
            nonlocal buffer
            received = []
            try:
                while not any(name == "song.done" for name, _ in received):
                    chunk = connection.recv(65536)
                    if not chunk:
                        break
                    buffer += chunk
                    text = buffer.decode("utf-8", "replace")
                    received = re.findall(r"event: ([a-z.]+)\r?\ndata: (.*)\r?\n", text)
            finally:
                connection.close()
            return received

        return collect


if __name__ == "__main__":
    unittest.main()
