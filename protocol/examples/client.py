#!/usr/bin/env python3
"""A Tactus client in Python: submits every audio file of a folder and waits for the results.

    python3 client.py MUSIC_FOLDER [--server tcp://127.0.0.1:5555] [--detector NAME]...
                      [--query MIN_BPM MAX_BPM] [--json]
                      [--curve-server-key server.key --curve-secret-key me.key_secret]

It follows protocol/SPEC.md with nothing but pyzmq: a DEALER socket for requests (each with
its own request id, an answer awaited with a timeout and the request sent once more before
giving up), a SUB socket for events, subscribed to each song id (the SHA-256 of its bytes)
*before* the song is submitted, a wait for every song's `song.done` (asking `status` every few
seconds in case an event was missed), then each song's `result`. With --query, it lists the
songs whose consensus tempo lies in a range. With the CURVE options, both sockets are CURVE
clients of a server that uses CurveZMQ (SPEC section 9), with keys from certificate files.

Files are recognised as audio by their first bytes (WAV, AIFF, FLAC, Ogg, MP3); the server
recognises them again and reports any it cannot read as a failed job.
"""

import argparse
import hashlib
import json
import os
import sys
import time
import uuid

import zmq
import zmq.auth

VERSION = b"TACTUS1"
FINAL_STATES = {"done", "failed", "cancelled"}


class NoAnswer(Exception):
    pass


class Rejected(Exception):
    def __init__(self, error):
        super().__init__(f"{error['code']}: {error['message']}")
        self.error = error


def load_curve(server_key_file, secret_key_file):
    """The server's public key and this client's key pair, from CZMQ certificate files."""
    if not server_key_file and not secret_key_file:
        return None
    if not (server_key_file and secret_key_file):
        sys.exit("--curve-server-key and --curve-secret-key go together")
    server_public, _ = zmq.auth.load_certificate(server_key_file)
    public, secret = zmq.auth.load_certificate(secret_key_file)
    if secret is None:
        sys.exit(f"{secret_key_file}: not a secret certificate")
    return server_public, public, secret


def set_curve(socket, curve):
    """Makes `socket` a CURVE client of the server (before it connects)."""
    if curve:
        server_public, public, secret = curve
        socket.setsockopt(zmq.CURVE_SERVERKEY, server_public)
        socket.setsockopt(zmq.CURVE_PUBLICKEY, public)
        socket.setsockopt(zmq.CURVE_SECRETKEY, secret)


class Client:
    """Requests to the coordinator's frontend, one at a time, over a DEALER socket."""

    def __init__(self, context, server, timeout, curve=None):
        self.server, self.timeout = server, timeout
        self.socket = context.socket(zmq.DEALER)
        self.socket.setsockopt(zmq.LINGER, 0)
        set_curve(self.socket, curve)
        self.socket.connect(server)

    def request(self, command, body, *binary, retries=1):
        """The `ok` reply's body and binary frames; raises Rejected or NoAnswer."""
        request_id = uuid.uuid4().hex.encode()
        frames = [b"", VERSION, command.encode(), request_id, json.dumps(body).encode(), *binary]
        timeout = self.timeout + sum(len(frame) for frame in binary) / 20e6
        for _ in range(retries + 1):
            self.socket.send_multipart(frames)
            deadline = time.monotonic() + timeout
            while (remaining := deadline - time.monotonic()) > 0:
                if not self.socket.poll(int(remaining * 1000)):
                    break
                reply = self.socket.recv_multipart()
                # [b"", TACTUS1, command, request id, status, body, binary...]; others are stale.
                if len(reply) < 6 or reply[3] != request_id:
                    continue
                answer = json.loads(reply[5])
                if reply[4] == b"error":
                    raise Rejected(answer)
                return answer, reply[6:]
        raise NoAnswer(f"no answer from {self.server} within {timeout * (retries + 1):.0f} s")


INLINE_LIMIT = 1 << 20  # the largest frame a server takes: larger songs go as an upload (SPEC 3.4, 3.9)


def upload(client, data, sha256):
    """Sends `data` as an upload in chunks (SPEC.md, section 3.9); returns the upload's id."""
    status, _ = client.request("upload", {"size": len(data), "sha256": sha256})
    while status["received"] < status["size"]:
        start = status["received"]
        chunk = data[start:start + status["chunk_bytes"]]
        status, _ = client.request("upload", {"upload": status["upload"], "offset": start}, chunk)
    return status["upload"]


def looks_like_audio(path):
    with open(path, "rb") as file:
        head = file.read(12)
    return (head[:4] in (b"fLaC", b"OggS", b"ID3\x03", b"ID3\x04", b"ID3\x02")
            or (head[:4] == b"RIFF" and head[8:12] == b"WAVE")
            or (head[:4] == b"FORM" and head[8:12] in (b"AIFF", b"AIFC"))
            or (len(head) >= 2 and head[0] == 0xFF and head[1] & 0xE0 == 0xE0))


def audio_files(folder):
    for root, _, names in sorted(os.walk(folder)):
        for name in sorted(names):
            path = os.path.join(root, name)
            if os.path.isfile(path) and looks_like_audio(path):
                yield path


def main():
    parser = argparse.ArgumentParser(description="Submit a folder of songs to Tactus and print their tempi.")
    parser.add_argument("folder")
    parser.add_argument("--server", default=os.environ.get("TACTUS_SERVER") or "tcp://127.0.0.1:5555")
    parser.add_argument("--events", help="the events endpoint (default: the server's port plus 2)")
    parser.add_argument("--detector", action="append", help="a detector to run (repeatable; default all)")
    parser.add_argument("--timeout", type=float, default=3.0, help="seconds to wait for each answer")
    parser.add_argument("--query", nargs=2, type=float, metavar=("MIN_BPM", "MAX_BPM"))
    parser.add_argument("--json", action="store_true", help="print one JSON object per song")
    parser.add_argument("--curve-server-key", help="the server's public certificate (server.key)")
    parser.add_argument("--curve-secret-key", help="this client's secret certificate (NAME.key_secret)")
    options = parser.parse_args()
    host, port = options.server.rsplit(":", 1)
    events = options.events or f"{host}:{int(port) + 2}"

    curve = load_curve(options.curve_server_key, options.curve_secret_key)
    context = zmq.Context()
    client = Client(context, options.server, options.timeout, curve)
    subscriber = context.socket(zmq.SUB)
    subscriber.setsockopt(zmq.LINGER, 0)
    set_curve(subscriber, curve)
    subscriber.connect(events)

    files_by_song, answered = {}, set()
    try:
        for path in audio_files(options.folder):
            with open(path, "rb") as file:
                data = file.read()
            song = hashlib.sha256(data).hexdigest()
            subscriber.setsockopt(zmq.SUBSCRIBE, song.encode())  # before submitting: no event missed
            body = {"name": os.path.basename(path)}
            if options.detector:
                body["detectors"] = options.detector
            while True:
                try:
                    if len(data) > INLINE_LIMIT:  # too large for one message: upload in chunks
                        body["upload"] = upload(client, data, song)
                        reply, _ = client.request("submit", body)
                    else:
                        reply, _ = client.request("submit", body, data)
                    break
                except Rejected as rejection:
                    if rejection.error["code"] != "busy":
                        raise
                    time.sleep(rejection.error.get("retry_after_ms", 1000) / 1000)
            files_by_song.setdefault(reply["song"], []).append(path)
            if all(job["state"] in FINAL_STATES for job in reply["jobs"]):  # answered from the store
                answered.add(reply["song"])
        print(f"{sum(len(files) for files in files_by_song.values())} songs submitted", file=sys.stderr)

        pending = set(files_by_song) - answered
        last_check = time.monotonic()
        while pending:
            if subscriber.poll(500):
                topic, version, name, body = subscriber.recv_multipart()[:4]
                if version == VERSION and name == b"song.done":
                    pending.discard(json.loads(body)["song"])
            if time.monotonic() - last_check > 5:
                last_check = time.monotonic()
                for song in list(pending):
                    jobs = client.request("status", {"song": song})[0]["jobs"]
                    if jobs and all(job["state"] in FINAL_STATES for job in jobs):
                        pending.discard(song)

        for song, files in sorted(files_by_song.items(), key=lambda item: item[1][0]):
            result, _ = client.request("result", {"song": song})
            for path in files:
                if options.json:
                    print(json.dumps({"file": path, "song": song, "analyses": result["analyses"],
                                      "consensus": result["consensus"]}, sort_keys=True))
                else:
                    tempi = ", ".join(f"{a['detector']} {a['bpm']:.2f}" if a["bpm"] else f"{a['detector']} -"
                                      for a in result["analyses"])
                    bpm = result["consensus"]["bpm"]
                    print(f"{path}: {f'{bpm:.2f} BPM' if bpm else 'no tempo'} ({tempi})")

        if options.query:
            body = {"min_bpm": options.query[0], "max_bpm": options.query[1]}
            for match in client.request("query", body)[0]["songs"]:
                print(json.dumps(match, sort_keys=True) if options.json else
                      f"{match['bpm']:7.2f} BPM  {match.get('name') or match['song']}")
    except (NoAnswer, Rejected) as error:
        print(f"client.py: {error}", file=sys.stderr)
        return 1
    finally:
        context.destroy(linger=0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
