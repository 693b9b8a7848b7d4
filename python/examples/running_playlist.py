#!/usr/bin/env python3
"""Build a running playlist from the library and print it (or write an M3U8 with --m3u8).

    python3 examples/running_playlist.py 10m@150,5m@170 [--m3u8 run.m3u8]
"""
import argparse

import tactus


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("profile", help="DURATION@CADENCE,... (durations in h, m or s)")
    parser.add_argument("--server")
    parser.add_argument("--m3u8", help="also write the playlist as M3U8 (the library's file names)")
    arguments = parser.parse_args()
    with tactus.Client(arguments.server) as server:
        run = server.playlist(profile=arguments.profile)
    for entry in run["entries"]:
        match = entry["match"]
        minutes, seconds = divmod(int(entry["start_s"]), 60)
        print(f"{entry['position']:3}  {minutes:3}:{seconds:02}  {entry['cadence']:5.0f} spm  {match['bpm']:6.1f} BPM  "
              f"{match['title'] or match['file']}")
    if any(fill["short"] for fill in run["fills"]):
        print("not enough songs for every segment")
    if arguments.m3u8:
        with open(arguments.m3u8, "w", encoding="utf-8") as file:
            file.write("#EXTM3U\n")
            for entry in run["entries"]:
                match = entry["match"]
                file.write(f"#EXTINF:{round(match['duration_s'])},{match['title'] or match['file']}\n{match['file']}\n")
        print(f"wrote {arguments.m3u8}")


if __name__ == "__main__":
    main()
