#!/usr/bin/env python3
"""Checks the module graph of Package.swift: what must never be under what.

Reads `swift package dump-package` (or the JSON file given as the first argument), walks each
target's dependencies transitively (targets and products of other packages), and fails when a
module reaches one that it must not: SQLite (GRDB) under the wire protocol, the client, the
worker, the plots and the web gateway (which is a client of the coordinator, never opening the
library); anything that computes on audio, recordings or tags (and FFTW, libsoxr, the decoders,
Rubber Band, TagLib) under the coordinator, its service-host pool, the wire protocol, the client
and the web gateway; the wire protocol under the library roots (which throw their own error, not
the protocol's error body). `--graph` prints every target with its direct dependencies instead.
"""
import json
import subprocess
import sys

# What computes on audio, recordings or tags, and the C libraries under it: the coordinator's
# process never links any of it (client content is parsed in service hosts and workers), nor do
# the wire protocol, the client and the web gateway.
CONTENT = ["TactusAudio", "TactusDSP", "TactusCadence", "TactusStretch", "TactusTags", "TactusAnalysis",
           "CMPG123", "CSndFile", "CFLAC", "CFFTW", "CSoxr", "CRubberBand", "CTagLib"]

FORBIDDEN = {
    "TactusModel": ["GRDB", "TactusStore", "TactusAudio"],
    "TactusProtocol": ["GRDB", "TactusStore"] + CONTENT,
    "TactusClient": ["GRDB", "TactusStore"] + CONTENT,
    "TactusWorker": ["GRDB", "TactusStore"],
    "TactusPlot": ["GRDB", "TactusStore"],
    "TactusWeb": ["GRDB", "TactusStore", "TactusLibraryService", "TactusCoordinator"] + CONTENT,
    "TactusCoordinator": CONTENT,
    "TactusServiceHost": CONTENT,
    "TactusLibraryRoots": ["GRDB", "TactusStore", "TactusAudio", "TactusProtocol"],
}


def load(argv):
    if len(argv) > 1 and argv[1] != "--graph":
        with open(argv[1]) as file:
            return json.load(file)
    out = subprocess.run(["swift", "package", "dump-package"], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def direct(target):
    """The names of a target's direct dependencies (targets, products, by-name)."""
    names = []
    for dependency in target.get("dependencies", []):
        for kind in ("byName", "target", "product"):
            if kind in dependency:
                names.append(dependency[kind][0])
    return names


def main(argv):
    package = load(argv)
    targets = {target["name"]: target for target in package["targets"]}
    graph = {name: direct(target) for name, target in targets.items()}
    if "--graph" in argv:
        for name in sorted(graph, key=str.lower):
            if targets[name]["type"] in ("regular", "executable"):
                print(f"{name} -> {', '.join(graph[name]) or '(none)'}")
        return 0

    def reach(name):
        seen, todo = set(), list(graph.get(name, []))
        while todo:
            node = todo.pop()
            if node not in seen:
                seen.add(node)
                todo.extend(graph.get(node, []))
        return seen

    failures = []
    for module, banned in FORBIDDEN.items():
        if module not in graph:
            failures.append(f"{module}: no such target in Package.swift")
            continue
        under = reach(module)
        failures += [f"{module} depends on {name} (directly or through another module)" for name in banned if name in under]
    for failure in failures:
        print(f"module graph: {failure}", file=sys.stderr)
    if not failures:
        print(f"module graph: {len(FORBIDDEN)} modules checked, no forbidden dependency")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
