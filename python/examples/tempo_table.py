#!/usr/bin/env python3
"""Print a table of every song's tempo, or (with pandas) save it as CSV.

    python3 examples/tempo_table.py [--server tcp://127.0.0.1:5555] [--csv tempi.csv]
"""
import argparse

import tactus


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", help="the server's frontend (default $TACTUS_SERVER or tcp://127.0.0.1:5555)")
    parser.add_argument("--csv", help="write the table to this CSV file (needs pandas)")
    arguments = parser.parse_args()
    with tactus.Client(arguments.server) as server:
        if arguments.csv:
            server.query_frame(order="bpm", limit=10000).to_csv(arguments.csv, index=False)
            print(f"wrote {arguments.csv}")
            return
        for song in server.query(order="bpm", limit=10000):
            name = song["title"] or song["file"]
            print(f"{song['bpm']:7.1f}  {len(song['detectors'])} agree  {name}")


if __name__ == "__main__":
    main()
