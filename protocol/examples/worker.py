#!/usr/bin/env python3
"""An external Tactus worker in Python: offers the detector `python-onset` to a coordinator.

Any program that speaks the worker side of protocol/SPEC.md (section 4) is a plugin. This one
needs only pyzmq and numpy:

    python3 worker.py --connect tcp://127.0.0.1:5556
                      [--curve-server-key server.key --curve-secret-key me.key_secret]

It sends READY, a HEARTBEAT every 2.5 s (also while it analyses, since analysis runs on
another thread), answers each JOB with a RESULT, reconnects with a backoff of 1 s doubling to
32 s when the coordinator is silent for 3 heartbeats or sends DISCONNECT, and on SIGINT or
SIGTERM finishes the current job, sends DISCONNECT and exits 0. With the CURVE options (or
$TACTUS_CURVE_SERVER_KEY and $TACTUS_CURVE_SECRET_KEY) its socket is a CURVE client of a
coordinator that uses CurveZMQ (SPEC section 9), with keys from the CZMQ certificate files that
`tactus keys generate` writes; the coordinator must have this worker's public key authorized.

The detector: the song's energy per hop, log-compressed; the onset strength is its positive
difference; the tempo is the autocorrelation lag of the onset strength with the highest peak
between min_bpm and max_bpm. It reads WAV files only (Python's `wave` module): anything else
is a failed job with `unsupported-format`.
"""

import argparse
import io
import json
import os
import queue
import random
import signal
import socket
import sys
import threading
import time
import wave

import numpy as np
import zmq
import zmq.auth

VERSION = b"TACTUS1"
HEARTBEAT_INTERVAL = 2.5  # seconds
LIVENESS = 3  # intervals of silence after which the coordinator is gone
BACKOFF_INITIAL, BACKOFF_MAX = 1.0, 32.0
MIN_SECONDS, MAX_SECONDS = 5.0, 7200.0

# The detector as READY declares it: the three common parameters first, exactly as SPEC 2.1 says.
DETECTOR = {
    "name": "python-onset",
    "version": "1.0",
    "summary": "energy onsets and their autocorrelation, in Python with numpy (WAV only)",
    "parameters": [
        {"name": "preset", "kind": "choice", "choices": ["default"], "default": "default", "presets": {},
         "summary": "default: the only configuration"},
        {"name": "min_bpm", "kind": "number", "min": 20, "max": 400, "default": 60, "presets": {},
         "summary": "lowest tempo reported, in beats per minute"},
        {"name": "max_bpm", "kind": "number", "min": 20, "max": 400, "default": 200, "presets": {},
         "summary": "highest tempo reported, in beats per minute"},
        {"name": "hop_ms", "kind": "integer", "min": 5, "max": 50, "default": 10, "presets": {},
         "summary": "milliseconds between energy measurements"},
    ],
}
DEFAULTS = {p["name"]: p["default"] for p in DETECTOR["parameters"]}


class JobFailure(Exception):
    """A job that cannot be analysed, with its protocol error code (SPEC section 7)."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code, self.message = code, message


def load_curve(server_key_file, secret_key_file):
    """The coordinator's public key and this worker's key pair, from CZMQ certificate files."""
    if not server_key_file and not secret_key_file:
        return None
    if not server_key_file or not secret_key_file:
        sys.exit("--curve-server-key and --curve-secret-key go together")
    server_public, _ = zmq.auth.load_certificate(server_key_file)
    public, secret = zmq.auth.load_certificate(secret_key_file)
    if secret is None:
        sys.exit(f"{secret_key_file}: not a secret certificate")
    return server_public, public, secret


def resolve(params):
    """The complete parameters: defaults for what is missing; unknown or out-of-range values fail."""
    resolved = dict(DEFAULTS)
    for name, value in params.items():
        declaration = next((p for p in DETECTOR["parameters"] if p["name"] == name), None)
        if declaration is None:
            raise JobFailure("invalid-parameter", f"python-onset: unknown parameter '{name}'")
        if declaration["kind"] == "choice":
            ok = value in declaration["choices"]
        else:
            ok = isinstance(value, (int, float)) and declaration["min"] <= value <= declaration["max"]
            if declaration["kind"] == "integer":
                ok = ok and float(value).is_integer()
        if not ok:
            raise JobFailure("invalid-parameter", f"python-onset: parameter '{name}' = {value!r} is not accepted")
        resolved[name] = value
    if resolved["min_bpm"] >= resolved["max_bpm"]:
        raise JobFailure("invalid-parameter", "python-onset: min_bpm must be below max_bpm")
    return resolved


def decode_wav(data, name):
    """Mono float samples in [-1, 1], the sample rate and the channel count of a WAV file."""
    if not data:
        raise JobFailure("empty", f"{name}: the file is empty (0 bytes)")
    if data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        raise JobFailure("unsupported-format", f"{name}: this worker reads WAV files only")
    try:
        with wave.open(io.BytesIO(data)) as reader:
            channels, width, rate = reader.getnchannels(), reader.getsampwidth(), reader.getframerate()
            declared = reader.getnframes()
            if declared / rate > MAX_SECONDS:
                raise JobFailure("too-long", f"{name}: longer than {MAX_SECONDS:.0f} s")
            raw = reader.readframes(declared)
    except (wave.Error, EOFError) as error:
        raise JobFailure("unsupported-format", f"{name}: {error}") from None
    frames = len(raw) // (width * channels)
    if frames < declared and frames / rate < MIN_SECONDS:
        raise JobFailure("truncated", f"{name}: truncated after {frames / rate:.2f} s of audio")
    raw = raw[: frames * width * channels]
    if width == 1:
        samples = (np.frombuffer(raw, dtype=np.uint8).astype(np.float32) - 128) / 128
    elif width == 3:
        bytes3 = np.frombuffer(raw, dtype=np.uint8).reshape(-1, 3).astype(np.int32)
        samples = ((bytes3[:, 0] | bytes3[:, 1] << 8 | bytes3[:, 2] << 16) << 8 >> 8).astype(np.float32) / 2**23
    else:
        kind = {2: "<i2", 4: "<i4"}[width]
        samples = np.frombuffer(raw, dtype=kind).astype(np.float32) / float(2 ** (8 * width - 1))
    mono = samples.reshape(-1, channels).mean(axis=1)
    if len(mono) / rate < MIN_SECONDS:
        raise JobFailure("too-short", f"{name}: {len(mono) / rate:.2f} s of audio, at least {MIN_SECONDS:.0f} s needed")
    return mono, rate, channels


def onset_tempo(mono, rate, params):
    """The tempo, its confidence and the best candidates, from the onset autocorrelation."""
    hop = max(1, int(rate * params["hop_ms"] / 1000))
    count = len(mono) // hop
    energy = (mono[: count * hop].reshape(count, hop) ** 2).mean(axis=1)
    onsets = np.maximum(np.diff(np.log1p(1000 * energy)), 0)
    onsets -= onsets.mean()
    size = 1 << int(np.ceil(np.log2(2 * len(onsets))))
    spectrum = np.fft.rfft(onsets, size)
    autocorrelation = np.fft.irfft(spectrum * np.conj(spectrum))[: len(onsets)]
    if autocorrelation[0] <= 0:
        return None, "silence", 0.0, []
    hop_s = hop / rate
    shortest = max(1, int(60 / params["max_bpm"] / hop_s))
    longest = min(len(autocorrelation) - 2, int(np.ceil(60 / params["min_bpm"] / hop_s)))
    lags = np.arange(shortest, longest + 1)
    values = autocorrelation[lags]
    peaks = [i for i in range(1, len(lags) - 1) if values[i] >= values[i - 1] and values[i] > values[i + 1]]
    if not peaks:
        return None, "no periodicity in the tempo range", 0.0, []
    peaks.sort(key=lambda i: values[i], reverse=True)
    candidates = []
    for i in peaks[:5]:
        # A parabola through the peak and its neighbours places it between lags.
        left, centre, right = values[i - 1], values[i], values[i + 1]
        shift = 0.5 * (left - right) / (left - 2 * centre + right) if left - 2 * centre + right != 0 else 0
        bpm = 60 / ((lags[i] + shift) * hop_s)
        if params["min_bpm"] <= bpm <= params["max_bpm"]:
            candidates.append({"bpm": float(bpm), "strength": float(values[i] / values[peaks[0]])})
    if not candidates:
        return None, "no periodicity in the tempo range", 0.0, []
    confidence = float(np.clip(values[peaks[0]] / autocorrelation[0], 0, 1))
    return candidates[0]["bpm"], None, confidence, candidates


def energy_envelope(mono, rate):
    """Mean squared amplitude per block of 23.2 ms (1024 samples at 44.1 kHz), and its hop."""
    block = max(1, round(rate * 1024 / 44100))
    count = len(mono) // block
    values = (mono[: count * block].reshape(count, block) ** 2).mean(axis=1)
    return values.astype("<f4"), block / rate


def run_job(job, audio):
    """The RESULT body and optional envelope frame answering one JOB."""
    answer = {"job": job["job"], "attempt": job["attempt"]}
    name = job.get("name") or f"song {job['song'][:16]}"
    try:
        params = resolve(job.get("params", {}))
        mono, rate, channels = decode_wav(audio, name)
        start = time.monotonic()
        bpm, reason, confidence, candidates = onset_tempo(mono, rate, params)
        answer["analysis"] = {
            "detector": DETECTOR["name"], "version": DETECTOR["version"], "params": params, "bpm": bpm,
            "reason": reason, "confidence": confidence, "candidates": candidates, "windows": [],
            "seconds": time.monotonic() - start,
        }
        answer["audio"] = {"format": "wav", "duration_s": len(mono) / rate, "sample_rate": rate, "channels": channels}
        if job.get("envelope"):
            values, hop = energy_envelope(mono, rate)
            answer["envelope_hop_s"] = hop
            return answer, values.tobytes()
    except JobFailure as failure:
        answer["error"] = {"code": failure.code, "message": failure.message}
    except Exception as error:  # a bad song must never kill the worker
        answer["error"] = {"code": "internal", "message": f"python-onset: {error}"}
    return answer, None


def analysis_thread(jobs, results):
    """Analyses the jobs one at a time, so that the socket thread keeps heartbeating."""
    while True:
        connection, job, audio = jobs.get()
        results.put((connection, job, *run_job(job, audio)))


def log(message):
    print(f"{time.strftime('%H:%M:%S')} python-onset: {message}", file=sys.stderr, flush=True)


def main():
    parser = argparse.ArgumentParser(description="A Tactus worker offering the python-onset detector.")
    parser.add_argument("--connect", default="tcp://127.0.0.1:5556", help="the coordinator's backend")
    parser.add_argument("--id", default=f"{socket.gethostname()}-{os.getpid()}-{random.randrange(16**4):04x}")
    parser.add_argument("--heartbeat-interval", type=float, default=HEARTBEAT_INTERVAL,
                        help="seconds between heartbeats (at most 2.5)")
    parser.add_argument("--curve-server-key", default=os.environ.get("TACTUS_CURVE_SERVER_KEY"),
                        help="the coordinator's public certificate (server.key)")
    parser.add_argument("--curve-secret-key", default=os.environ.get("TACTUS_CURVE_SECRET_KEY"),
                        help="this worker's secret certificate (NAME.key_secret)")
    options = parser.parse_args()
    curve = load_curve(options.curve_server_key, options.curve_secret_key)
    interval = min(options.heartbeat_interval, HEARTBEAT_INTERVAL)

    stopping = threading.Event()
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, lambda *_: stopping.set())
    # A parent may have started us with these signals blocked (the mask is inherited).
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    jobs, results = queue.Queue(), queue.Queue()
    threading.Thread(target=analysis_thread, args=(jobs, results), daemon=True).start()

    context = zmq.Context()
    dealer, connection, failures = None, 0, 0
    held = None  # (connection, job, attempt) the coordinator waits for
    last_received = last_sent = reconnect_at = 0.0

    def send(*frames):
        nonlocal last_sent
        dealer.send_multipart([VERSION, *frames], flags=zmq.NOBLOCK)
        last_sent = time.monotonic()

    def connect():
        nonlocal dealer, connection, last_received, reconnect_at
        dealer = context.socket(zmq.DEALER)
        dealer.setsockopt(zmq.LINGER, 0)
        if curve:
            # A CURVE client (SPEC 9.1): set before connecting.
            dealer.curve_serverkey, dealer.curve_publickey, dealer.curve_secretkey = curve
        dealer.connect(options.connect)
        connection += 1
        last_received, reconnect_at = time.monotonic(), None
        params = {name: value for name, value in DEFAULTS.items()}
        send(b"READY", json.dumps({"worker_id": options.id, "detector": DETECTOR, "params": params}).encode())
        log(f"connecting to {options.connect} as {options.id}")

    def drop(reason):
        nonlocal dealer, held, failures, reconnect_at
        dealer.close()
        dealer, held = None, None
        failures += 1
        delay = min(BACKOFF_INITIAL * 2 ** (failures - 1), BACKOFF_MAX)
        reconnect_at = time.monotonic() + delay
        log(f"{reason}; reconnecting in {delay:.0f} s")

    connect()
    answered = False
    while True:
        now = time.monotonic()
        if stopping.is_set() and held is None:
            if dealer is not None:
                send(b"DISCONNECT", json.dumps({"reason": "the worker is stopping"}).encode())
                dealer.setsockopt(zmq.LINGER, 500)
                dealer.close()
            context.term()
            return 0
        if dealer is None:
            if now >= reconnect_at:
                connect()
                answered = False
            else:
                time.sleep(min(0.1, reconnect_at - now))
                continue
        if now - last_received > interval * LIVENESS:
            drop("nothing from the coordinator")
            continue
        if now - last_sent >= interval:
            send(b"HEARTBEAT", b"{}")
        while not results.empty():
            job_connection, job, body, envelope = results.get()
            if held == (job_connection, job["job"], job["attempt"]) and job_connection == connection:
                send(b"RESULT", json.dumps(body).encode(), *([envelope] if envelope is not None else []))
                held = None
                log(f"job {job['job']}: {body.get('analysis', {}).get('bpm') or body.get('error')}")
        if not dealer.poll(100):
            continue
        frames = dealer.recv_multipart()
        last_received = time.monotonic()
        if not answered:
            answered, failures = True, 0
        if len(frames) < 3 or frames[0] != VERSION:
            log(f"ignoring a message that is not {VERSION.decode()}")
            continue
        command, body = frames[1], json.loads(frames[2])
        if command == b"JOB":
            if held is not None or len(frames) != 4:
                error = {"code": "internal", "message": "busy with another job"} if held else \
                    {"code": "bad-request", "message": "a JOB has one audio frame"}
                send(b"RESULT", json.dumps({"job": body["job"], "attempt": body["attempt"], "error": error}).encode())
                continue
            held = (connection, body["job"], body["attempt"])
            jobs.put((connection, body, frames[3]))
        elif command == b"DISCONNECT":
            drop(f"disconnected by the coordinator ({body.get('error') or body.get('reason') or 'shutting down'})")


if __name__ == "__main__":
    sys.exit(main())
