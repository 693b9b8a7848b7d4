#!/usr/bin/env python3
"""The web gateway's memory through parallel uploads of large songs.

    python3 Tests/Web/upload_memory.py [--uploads 4] [--mib 200] [--chunked | --length | --both]

Starts `tactus serve --no-local-workers` ($TACTUS_BINARY, else this checkout's debug build) with
its gateway on a free loopback port, and POSTs `--uploads` songs of `--mib` MiB each to
/api/v1/songs at once (WAV files, each different, made as they are sent: this script never holds
one), with `Transfer-Encoding: chunked`, with a `Content-Length`, or one round of each (the
default). Prints each answer and the gateway's resident memory (VmRSS) before, and its peak
(VmHWM, the most it ever held) after each round. Exits 1 when the peak passes `--limit-mb`
(300 by default).
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import struct
import sys
import threading
import time
import urllib.parse
from typing import Optional

import webserver

PIECE = 1 << 16


def wav_header(size: int, rate: int = 22050) -> bytes:
    """The 44-byte header of a mono 16-bit WAV file of `size` bytes in all."""
    data = size - 44
    return (b"RIFF" + struct.pack("<I", size - 8) + b"WAVEfmt " + struct.pack("<IHHIIHH", 16, 1, 1, rate, rate * 2, 2, 16)
            + b"data" + struct.pack("<I", data))


def song_pieces(size: int, seed: int):
    """The bytes of a WAV song of `size` bytes, in pieces: quiet noise, different for each `seed`."""
    yield wav_header(size) + struct.pack("<Q", seed)
    sent = 52
    piece = bytes((seed * 7 + index * 13) % 5 for index in range(PIECE))
    while sent < size:
        count = min(PIECE, size - sent)
        yield piece[:count]
        sent += count


def post_song(url: str, size: int, seed: int, chunked: bool, headers: Optional[dict] = None) -> tuple[int, dict, bytes]:
    """POSTs a song of `size` bytes to /api/v1/songs, as it is made; (status, headers, body)."""
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=600)
    try:
        connection.putrequest("POST", f"/api/v1/songs?name=large-{seed}.wav")
        connection.putheader("Content-Type", "application/octet-stream")
        for name, value in (headers or {}).items():
            connection.putheader(name, value)
        if chunked:
            connection.putheader("Transfer-Encoding", "chunked")
        else:
            connection.putheader("Content-Length", str(size))
        connection.endheaders()
        for piece in song_pieces(size, seed):
            connection.send(b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece)
        if chunked:
            connection.send(b"0\r\n\r\n")
        response = connection.getresponse()
        return response.status, dict(response.headers), response.read()
    finally:
        connection.close()


def parallel_uploads(url: str, count: int, size: int, chunked: bool, first_seed: int = 0) -> list:
    """`count` songs POSTed at once; their (status, headers, body), or the exception each raised."""
    answers: list = [None] * count

    def upload(index: int) -> None:
        try:
            answers[index] = post_song(url, size, first_seed + index, chunked)
        except Exception as error:  # noqa: BLE001 - reported by the caller
            answers[index] = error

    threads = [threading.Thread(target=upload, args=(index,)) for index in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return answers


def gateway_pid(serve_pid: int) -> int:
    """The `tactus web` process `tactus serve` started."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                parent = int(stat.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                arguments = cmdline.read().split(b"\0")
        except (OSError, ValueError, IndexError):
            continue
        if parent == serve_pid and len(arguments) > 1 and arguments[1] == b"web":
            return int(entry)
    raise RuntimeError(f"tactus serve {serve_pid} has no tactus web process")


def memory_mib(pid: int) -> dict:
    """VmRSS and VmHWM of `pid`, in MiB."""
    figures = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(("VmRSS", "VmHWM")):
                figures[line.split(":")[0]] = int(line.split()[1]) / 1024
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--uploads", type=int, default=4)
    parser.add_argument("--mib", type=int, default=200)
    parser.add_argument("--limit-mb", type=float, default=300)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--chunked", action="store_const", const=[True], dest="modes")
    mode.add_argument("--length", action="store_const", const=[False], dest="modes")
    arguments = parser.parse_args()
    server = webserver.WebServer("--no-local-workers")
    try:
        pid = gateway_pid(server.process.pid)
        print(f"binary {webserver.binary()}, gateway {server.url} (pid {pid})")
        print("before: VmRSS {VmRSS:.0f} MiB".format(**memory_mib(pid)))
        peak = 0.0
        for round_index, chunked in enumerate(arguments.modes or [True, False]):
            started = time.monotonic()
            answers = parallel_uploads(server.url, arguments.uploads, arguments.mib << 20, chunked,
                                       first_seed=round_index * arguments.uploads)
            figures = memory_mib(pid)
            peak = figures["VmHWM"]
            print(f"{arguments.uploads} x {arguments.mib} MiB {'chunked' if chunked else 'with Content-Length'} "
                  f"in {time.monotonic() - started:.1f} s: peak (VmHWM) {peak:.0f} MiB, now (VmRSS) {figures['VmRSS']:.0f} MiB")
            for answer in answers:
                if isinstance(answer, Exception):
                    print(f"  {type(answer).__name__}: {answer}")
                else:
                    status, _, body = answer
                    text = body.decode(errors="replace")
                    try:
                        reply = json.loads(body)
                        text = reply.get("song", "")[:16] or f"{reply.get('code')}: {reply.get('message')}"
                    except ValueError:
                        pass
                    print(f"  {status} {text[:160]}")
        return 0 if peak <= arguments.limit_mb else 1
    finally:
        server.stop()


if __name__ == "__main__":
    sys.exit(main())
