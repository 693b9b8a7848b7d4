#!/usr/bin/env python3
"""Submit files or folders, show progress, and print each song's tempo as it finishes.

    python3 examples/submit_and_wait.py ~/Music/running [--server tcp://HOST:5555]

CURVE: set TACTUS_CURVE_SERVER_KEY and TACTUS_CURVE_SECRET_KEY to the certificate files.
"""
import argparse
import sys

import tactus


def show(progress: tactus.Progress) -> None:
    last = progress.last
    if last is not None and last.done:
        bpm = (last.consensus or {}).get("bpm")
        print(f"  {last.path}: {bpm:.1f} BPM" if bpm else f"  {last.path}: no tempo found")
    print(f"\r{progress.submitted}/{progress.total} sent, {progress.finished} finished", end="", file=sys.stderr, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--server")
    arguments = parser.parse_args()
    with tactus.Client(arguments.server, timeout=30) as server:
        submitted = server.submit_files(arguments.paths, progress=show)
    print(f"\n{len(submitted)} songs analysed", file=sys.stderr)


if __name__ == "__main__":
    main()
