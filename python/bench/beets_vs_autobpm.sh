#!/bin/bash
# Tactus through the beets plugin (tactus analyze here, no server) against beets' own autobpm
# plugin (librosa's beat tracker) on a folder of songs with a truth.csv (file,bpm,...): time of
# `beet tactus` and `beet autobpm` over the whole folder, and Acc1 / Acc2 (MIREX: within 4 % of
# the reference tempo; Acc2 also of twice, half, three times or a third of it).
#
#   python/bench/beets_vs_autobpm.sh ../shared/corpus/real
#
# Needs a python3 with beets, librosa and resampy (BEETS_PYTHON, default: python3; for example
# `python3 -m venv /tmp/autobpm && /tmp/autobpm/bin/pip install beets librosa resampy pyzmq jsonschema`)
# and a release build of tactus (TACTUS, default: .build/release/tactus). The songs are imported in
# place (copy: no, write: no): nothing in the folder is changed.
set -euo pipefail
corpus=$(realpath "${1:?give the folder of songs with truth.csv}")
root=$(cd "$(dirname "$0")/../.." && pwd)
python=${BEETS_PYTHON:-python3}
tactus=$(realpath "${TACTUS:-$root/.build/release/tactus}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for plugin in tactus autobpm; do
  home=$work/$plugin
  mkdir -p "$home"
  cat > "$home/config.yaml" <<CONFIG
directory: $work/music
library: $home/library.db
plugins: [$plugin]
import: {write: no, copy: no, quiet: yes}
tactus: {binary: $tactus}
autobpm: {auto: no}
CONFIG
  export BEETSDIR=$home PYTHONPATH=$root/python/src
  "$python" -m beets import -A -q "$corpus" > /dev/null 2>&1
  start=$(date +%s.%N)
  "$python" -m beets "$plugin" > /dev/null 2> "$home/log"
  end=$(date +%s.%N)
  field=$([ "$plugin" = tactus ] && echo '$tactus_bpm' || echo '$bpm')
  "$python" -m beets ls -f "\$path|$field" > "$home/bpm.txt"
  echo "$plugin $(echo "$end - $start" | bc) $home/bpm.txt"
done > "$work/runs.txt"
python3 - "$corpus/truth.csv" "$work/runs.txt" <<'PYTHON'
import csv, os, sys
truth = {row["file"]: float(row["bpm"]) for row in csv.DictReader(open(sys.argv[1]))}
for line in open(sys.argv[2]):
    plugin, seconds, listing = line.split()
    rows = [entry.rstrip("\n").rsplit("|", 1) for entry in open(listing) if entry.strip()]
    acc1 = acc2 = 0
    for path, bpm in rows:
        estimate, reference = float(bpm or 0), truth[os.path.basename(path)]
        acc1 += abs(estimate - reference) <= 0.04 * reference
        acc2 += any(abs(estimate - reference * f) <= 0.04 * reference * f for f in (1, 2, 0.5, 3, 1 / 3))
    print(f"beet {plugin}: {len(rows)} songs in {float(seconds):.1f} s, Acc1 {100 * acc1 / len(rows):.1f} %, "
          f"Acc2 {100 * acc2 / len(rows):.1f} %")
PYTHON
