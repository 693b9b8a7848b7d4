#!/usr/bin/env python3
"""Writes BeatNet's trained weights as one plain little-endian float32 file.

BeatNet (Heydari, Cwitkowitz & Duan, "BeatNet: CRNN and particle filtering for online joint
beat, downbeat and meter tracking", ISMIR 2021) ships three trained models in its PyPI package
(`BeatNet` 1.1.3, licence CC BY 4.0). Each `models/model_N_weights.pt` is a PyTorch state dict
(a zip archive of pickled tensors). This script reads one with torch and writes its tensors,
in the order below, as raw little-endian float32 values (row-major, PyTorch's own layout),
with no header:

    conv1.weight       2 x 1 x 10
    conv1.bias         2
    linear0.weight     150 x 262
    linear0.bias       150
    lstm.weight_ih_l0  600 x 150   (gates in PyTorch's order: input, forget, cell, output)
    lstm.weight_hh_l0  600 x 150
    lstm.bias_ih_l0    600
    lstm.bias_hh_l0    600
    lstm.weight_ih_l1  600 x 150
    lstm.weight_hh_l1  600 x 150
    lstm.bias_ih_l1    600
    lstm.bias_hh_l1    600
    linear.weight      3 x 150     (rows: beat, downbeat, no beat)
    linear.bias        3

402,325 values, 1,609,300 bytes. Tactus embeds the file in its binary (nothing is fetched at
run time) and checks its size when it loads it.

Usage (in a virtual environment with torch):
    pip download BeatNet==1.1.3 --no-deps -d dl && unzip dl/BeatNet-1.1.3-py3-none-any.whl -d beatnet
    python convert_weights.py beatnet/BeatNet/models/model_1_weights.pt OUT.f32
"""
import hashlib
import sys

import numpy as np
import torch

ORDER = [
    ("conv1.weight", (2, 1, 10)),
    ("conv1.bias", (2,)),
    ("linear0.weight", (150, 262)),
    ("linear0.bias", (150,)),
    ("lstm.weight_ih_l0", (600, 150)),
    ("lstm.weight_hh_l0", (600, 150)),
    ("lstm.bias_ih_l0", (600,)),
    ("lstm.bias_hh_l0", (600,)),
    ("lstm.weight_ih_l1", (600, 150)),
    ("lstm.weight_hh_l1", (600, 150)),
    ("lstm.bias_ih_l1", (600,)),
    ("lstm.bias_hh_l1", (600,)),
    ("linear.weight", (3, 150)),
    ("linear.bias", (3,)),
]


def main(source, destination):
    state = torch.load(source, map_location="cpu", weights_only=True)
    if set(state) != {name for name, _ in ORDER}:
        sys.exit(f"{source}: unexpected tensors {sorted(state)}")
    parts = []
    for name, shape in ORDER:
        tensor = state[name]
        if tuple(tensor.shape) != shape:
            sys.exit(f"{source}: {name} has shape {tuple(tensor.shape)}, expected {shape}")
        parts.append(tensor.detach().to(torch.float32).contiguous().numpy().astype("<f4").ravel())
    values = np.concatenate(parts)
    data = values.tobytes()
    with open(destination, "wb") as out:
        out.write(data)
    print(f"{destination}: {values.size} float32 values, {len(data)} bytes, sha256 {hashlib.sha256(data).hexdigest()}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
