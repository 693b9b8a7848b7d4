#!/usr/bin/env python3
"""Page load times of a running gateway, and its memory.

    python3 Tests/Web/measure.py http://127.0.0.1:8080 [--pid PID] [--runs 20]

Times each page and API call `--runs` times (whole responses, one connection each, as a browser
opening the page) and prints the median and the slowest; with --pid (the `tactus web` process),
its resident memory before and after. Used for the figures of a 100,000-song library
(`tactus-bench store --keep`, then `tactus serve --data THAT-FOLDER --no-local-workers`).
"""
import argparse
import json
import statistics
import time
import urllib.request


def rss(pid: int) -> str:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(("VmRSS", "VmHWM")):
                yield line.split(":")[0], int(line.split()[1]) // 1024


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("--pid", type=int)
    parser.add_argument("--runs", type=int, default=20)
    arguments = parser.parse_args()
    base = arguments.url.rstrip("/")
    with urllib.request.urlopen(base + "/api/v1/songs?limit=1&order=newest") as response:
        song = json.load(response)["songs"][0]["song"]
    if arguments.pid:
        print("gateway memory before:", ", ".join(f"{name} {mib} MiB" for name, mib in rss(arguments.pid)))
    paths = [
        "/", "/?min_bpm=165&max_bpm=175&octave=true", "/?min_bpm=120&max_bpm=130&order=bpm&offset=5000",
        "/?source=agree&agree=3&min_bpm=100&max_bpm=140",
        # Sorted by a column over every song, the first page and one far in.
        "/?order=title", "/?order=artist&descending=true&offset=50000", "/?order=duration", "/?order=confidence&descending=true",
        "/?order=agreement&descending=true", "/?source=comb-filter&order=confidence&descending=true",
        "/?min_bpm=165&max_bpm=175&order=title",
        f"/songs/{song}", "/playlist?profile=10m@150,5m@170",
        "/queue", "/compare",
        "/api/v1/songs?min_bpm=165&max_bpm=175&octave=true&limit=20", "/api/v1/songs?limit=0&histogram=1",
        "/api/v1/songs?order=title&limit=20", f"/api/v1/songs/{song}", f"/api/v1/songs/{song}/figure.svg",
        "/api/v1/playlist?profile=10m@150,5m@170&format=m3u8", "/api/v1/status", "/metrics",
    ]
    print(f"{'page':60} {'median ms':>10} {'max ms':>8} {'bytes':>9}")
    for path in paths:
        times = []
        size = 0
        runs = 3 if path == "/compare" else arguments.runs
        for _ in range(runs):
            start = time.perf_counter()
            with urllib.request.urlopen(base + path, timeout=300) as response:
                size = len(response.read())
            times.append((time.perf_counter() - start) * 1000)
        print(f"{path[:60]:60} {statistics.median(times):10.1f} {max(times):8.1f} {size:9}")
    if arguments.pid:
        print("gateway memory after:", ", ".join(f"{name} {mib} MiB" for name, mib in rss(arguments.pid)))


if __name__ == "__main__":
    main()
