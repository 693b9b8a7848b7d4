"""Fixtures: a real `tactus serve` on free loopback ports in a temporary directory, and songs
with known tempi synthesised here (click tracks written with the standard library's wave)."""
from __future__ import annotations

import json
import math
import os
import shutil
import struct
import subprocess
import sys
import wave
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

ROOT = Path(__file__).resolve().parents[2]


def tactus_binary() -> str:
    """$TACTUS_BINARY, else the debug build of this checkout."""
    binary = os.environ.get("TACTUS_BINARY") or str(ROOT / ".build" / "debug" / "tactus")
    if not os.access(binary, os.X_OK):
        pytest.skip(f"no tactus binary at {binary}: build it (swift build) or set TACTUS_BINARY")
    return binary


class Server:
    def __init__(self, process: subprocess.Popen, endpoints: dict, data: Path) -> None:  # type: ignore[type-arg]
        self.process = process
        self.frontend: str = endpoints["frontend"]
        self.backend: str = endpoints["backend"]
        self.events: str = endpoints["events"]
        self.data = data


@contextmanager
def running_server(data: Path, *options: str, preexec_fn: Callable[[], None] | None = None) -> Iterator[Server]:
    """A `tactus serve` with its data in `data` on free loopback ports (and `options`, such as
    `--library-root DIR`; `preexec_fn` runs in the child before it starts, to set its limits),
    stopped at the end."""
    process = subprocess.Popen(
        [tactus_binary(), "serve", "--data", str(data), "--workers", "1", "--json", "--no-web",
         "--frontend", "tcp://127.0.0.1:*", "--backend", "tcp://127.0.0.1:*", "--events", "tcp://127.0.0.1:*",
         "--log-level", "error", *options],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, preexec_fn=preexec_fn)
    assert process.stdout is not None
    line = process.stdout.readline()
    if not line:
        process.kill()
        pytest.fail("tactus serve printed no endpoints")
    try:
        yield Server(process, json.loads(line), data)
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with running_server(tmp_path_factory.mktemp("tactus-data")) as running:
        yield running


def click_track(path: Path, bpm: float, seconds: float = 30.0, rate: int = 22050) -> Path:
    """A WAV file of clicks (a decaying 1 kHz burst) at `bpm`, accented every fourth beat."""
    frames = bytearray()
    period = 60.0 / bpm
    total = int(seconds * rate)
    click = int(0.03 * rate)
    for index in range(total):
        t = index / rate
        beat = int(t / period)
        phase = t - beat * period
        sample = 0.0
        if phase * rate < click:
            amplitude = 0.9 if beat % 4 == 0 else 0.5
            sample = amplitude * math.exp(-phase * 120) * math.sin(2 * math.pi * 1000 * phase)
        frames += struct.pack("<h", int(sample * 32767))
    with wave.open(str(path), "wb") as file:
        file.setnchannels(1)
        file.setsampwidth(2)
        file.setframerate(rate)
        file.writeframes(bytes(frames))
    return path


@pytest.fixture(scope="session")
def songs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of three click tracks (100, 120 and 150 BPM) and a text file that is not audio."""
    folder = tmp_path_factory.mktemp("songs")
    for bpm in (100, 120, 150):
        click_track(folder / f"click-{bpm}.wav", bpm)
    (folder / "notes.txt").write_text("not a song\n")
    return folder


@pytest.fixture
def pandas_available() -> bool:
    return shutil.which("python3") is not None and _has("pandas")


def _has(module: str) -> bool:
    try:
        __import__(module)
        return True
    except ImportError:
        return False
