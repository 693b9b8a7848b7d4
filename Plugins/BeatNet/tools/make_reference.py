#!/usr/bin/env python3
"""Writes the fixture that proves Tactus's Swift port of BeatNet: a few seconds of audio
synthesised deterministically, and the features and activation BeatNet's own Python code
computes for it.

Run once, in a virtual environment with torch, numpy<2, madmom 0.16.1 and the BeatNet 1.1.3
wheel unpacked (see README.md beside this script):

    python make_reference.py BEATNET_DIR OUT_DIR

BEATNET_DIR is the unpacked wheel (it holds `BeatNet/`). The features are computed by
BeatNet's `LOG_SPECT` (madmom's FramedSignal, STFT, FilteredSpectrogram,
LogarithmicSpectrogram and SpectrogramDifference, with BeatNet's settings) and the activation
by BeatNet's `BDA` network with the weights of `models/model_1_weights.pt`, exactly as
`BeatNet.activation_extractor_online` does it (softmax over the three outputs).

Three shims, none of which changes a number:
- madmom 0.16.1 still names `np.float` and `np.int`, which numpy 1.24 removed; they are
  restored as the builtin `float` and `int` they were aliases of.
- madmom 0.16.1 imports `collections.MutableSequence`, which Python 3.10 moved to
  `collections.abc`; the name is restored.
- BeatNet's `common.py` imports librosa at module level but `LOG_SPECT.process_audio` never
  uses it; an empty module stands in for it.

Writes to OUT_DIR:
    reference.wav         the audio: 16-bit PCM, mono, 22,050 Hz
    features.f32          frames x 272 float32 (little-endian, row-major): 136 log filtered
                          spectrogram bands, then their 136 positive differences
    activation.f32        frames x 3 float32: P(beat), P(downbeat), P(no beat) per frame
"""
import collections
import collections.abc
import os
import sys
import types
import wave

import numpy as np

np.float = float  # madmom 0.16.1 uses the aliases numpy 1.24 removed
np.int = int
collections.MutableSequence = collections.abc.MutableSequence  # and Python 3.10 moved this
sys.modules.setdefault("librosa", types.ModuleType("librosa"))

import torch  # noqa: E402

SAMPLE_RATE = 22050
SECONDS = 3.0
BPM = 120.0


def synthesise():
    """A drum pattern at 120 BPM over a bass line: kick on every beat, snare on 2 and 4,
    closed hi-hat on the eighths, from a fixed random seed."""
    rng = np.random.RandomState(18)
    n = int(SAMPLE_RATE * SECONDS)
    t = np.arange(n) / SAMPLE_RATE
    out = np.zeros(n)
    beat = 60.0 / BPM

    def add(at, signal):
        start = int(round(at * SAMPLE_RATE))
        stop = min(n, start + len(signal))
        if start < n:
            out[start:stop] += signal[: stop - start]

    kick_t = np.arange(int(0.25 * SAMPLE_RATE)) / SAMPLE_RATE
    kick = np.sin(2 * np.pi * (50 * kick_t + 60 * (1 - np.exp(-kick_t * 30)) / 30)) * np.exp(-kick_t * 12)
    snare_t = np.arange(int(0.18 * SAMPLE_RATE)) / SAMPLE_RATE
    hat_t = np.arange(int(0.05 * SAMPLE_RATE)) / SAMPLE_RATE
    for index in range(int(SECONDS / beat) + 1):
        at = 0.1 + index * beat
        add(at, 0.8 * kick)
        if index % 2 == 1:
            snare = (rng.uniform(-1, 1, len(snare_t)) * 0.5 + 0.3 * np.sin(2 * np.pi * 190 * snare_t)) * np.exp(-snare_t * 25)
            add(at, 0.5 * snare)
        for half in (0, 0.5):
            hat = rng.uniform(-1, 1, len(hat_t)) * np.exp(-hat_t * 90)
            add(at + half * beat, 0.15 * np.diff(np.concatenate([[0], hat])))
    bass = 0.2 * np.sin(2 * np.pi * 55 * t) * (0.6 + 0.4 * np.cos(2 * np.pi * t / (2 * beat)))
    out += bass
    out /= max(1.0, np.abs(out).max() / 0.9)
    return np.round(out * 32767).astype("<i2")


def main(beatnet_dir, out_dir):
    sys.path.insert(0, beatnet_dir)
    from BeatNet.log_spect import LOG_SPECT
    from BeatNet.model import BDA

    os.makedirs(out_dir, exist_ok=True)
    pcm = synthesise()
    with wave.open(os.path.join(out_dir, "reference.wav"), "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(SAMPLE_RATE)
        wav.writeframes(pcm.tobytes())
    audio = pcm.astype(np.float32) / 32768  # what a decoder hands over (libsndfile's scaling)

    # BeatNet.__init__: 20 ms hop, 64 ms window at 22,050 Hz, 24 bands per octave.
    hop = int(20 * 0.001 * SAMPLE_RATE)
    win = int(64 * 0.001 * SAMPLE_RATE)
    proc = LOG_SPECT(sample_rate=SAMPLE_RATE, win_length=win, hop_size=hop, n_bands=[24], mode="offline")
    model = BDA(272, 150, 2, "cpu")
    state = torch.load(os.path.join(beatnet_dir, "BeatNet", "models", "model_1_weights.pt"), map_location="cpu")
    missing, unexpected = model.load_state_dict(state, strict=False)
    assert not missing and not unexpected, (missing, unexpected)
    model.eval()
    # BeatNet.activation_extractor_online, keeping all three outputs.
    with torch.no_grad():
        feats = proc.process_audio(audio).T
        preds = model(torch.from_numpy(feats).unsqueeze(0))[0]
        preds = model.final_pred(preds).numpy().T
    feats.astype("<f4").tofile(os.path.join(out_dir, "features.f32"))
    preds.astype("<f4").tofile(os.path.join(out_dir, "activation.f32"))
    print(f"hop {hop}, window {win}: {feats.shape[0]} frames x {feats.shape[1]} features; "
          f"activation {preds.shape}, beat max {preds[:, 0].max():.3f}, downbeat max {preds[:, 1].max():.3f}")
    strongest = np.argsort(-(preds[:, 0] + preds[:, 1]))[:8]
    print("strongest beat frames:", sorted(strongest.tolist()))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
