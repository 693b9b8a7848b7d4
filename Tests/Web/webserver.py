"""A real `tactus serve` with its web gateway on free loopback ports, for the web tests, and
songs with known tempi (click tracks written with the standard library's wave module)."""
from __future__ import annotations

import json
import math
import os
import shutil
import struct
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
import wave
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parents[2]


def binary() -> Optional[str]:
    """$TACTUS_BINARY, else the debug build of this checkout; None when missing."""
    path = os.environ.get("TACTUS_BINARY") or str(ROOT / ".build" / "debug" / "tactus")
    return path if os.access(path, os.X_OK) else None


class WebServer:
    """`tactus serve --web 127.0.0.1:0` in a temporary directory; `url` is the gateway's."""

    def __init__(self, *arguments: str, workers: int = 1) -> None:
        executable = binary()
        if executable is None:
            raise RuntimeError("no tactus binary: build it (swift build) or set TACTUS_BINARY")
        self.directory = tempfile.mkdtemp(prefix="tactus-web-")
        data = os.path.join(self.directory, "data")
        self.process = subprocess.Popen(
            [executable, "serve", "--data", data, "--workers", str(workers), "--json", "--web", "127.0.0.1:0",
             "--frontend", "tcp://127.0.0.1:*", "--backend", "tcp://127.0.0.1:*", "--events", "tcp://127.0.0.1:*",
             "--log-level", "error", *arguments],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        announcement = os.path.join(data, "web.json")
        while not os.path.exists(announcement):
            if time.monotonic() > deadline or self.process.poll() is not None:
                self.stop()
                raise RuntimeError("tactus serve did not start its web gateway")
            time.sleep(0.05)
        with open(announcement) as file:
            self.url: str = json.load(file)["url"].rstrip("/")

    def get(self, path: str, headers: Optional[dict] = None):
        return request(self.url + path, headers=headers)

    def upload(self, path: Path) -> dict:
        status, _, body = request(self.url + "/api/v1/songs?name=" + path.name, data=path.read_bytes(),
                                  headers={"Content-Type": "application/octet-stream"})
        if status != 202:
            raise RuntimeError(f"upload of {path.name}: {status} {body!r}")
        return json.loads(body)

    def wait(self, song: str, timeout: float = 180) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            _, _, body = self.get("/api/v1/status?song=" + song)
            jobs = json.loads(body)["jobs"]
            if jobs and all(job["state"] in ("done", "failed", "cancelled") for job in jobs):
                return
            time.sleep(0.2)
        raise TimeoutError(f"song {song} not analysed within {timeout} s")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.directory, ignore_errors=True)


def request(url: str, data: Optional[bytes] = None, headers: Optional[dict] = None, method: Optional[str] = None):
    """(status, headers, body) of one HTTP request; error statuses are returned, not raised."""
    req = urllib.request.Request(url, data=data, headers=headers or {}, method=method)
    try:
        with urllib.request.urlopen(req, timeout=60) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def click_track(path: Path, bpm: float, seconds: float = 12.0, rate: int = 22050) -> Path:
    """A mono WAV of clicks (a decaying 1 kHz burst) at `bpm`, every fourth beat accented."""
    period, click = 60.0 / bpm, int(0.03 * rate)
    samples = bytearray()
    for index in range(int(seconds * rate)):
        t = index / rate
        beat = int(t / period)
        phase = t - beat * period
        value = 0.0
        if phase * rate < click:
            value = (0.9 if beat % 4 == 0 else 0.5) * math.exp(-phase * 120) * math.sin(2 * math.pi * 1000 * phase)
        samples += struct.pack("<h", int(value * 32767))
    with wave.open(str(path), "wb") as file:
        file.setnchannels(1)
        file.setsampwidth(2)
        file.setframerate(rate)
        file.writeframes(bytes(samples))
    return path
