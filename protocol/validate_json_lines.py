#!/usr/bin/env python3
"""Validates JSON Lines against one schema of schema/, or a part of one.

Usage: validate_json_lines.py SCHEMA_REF FILE

SCHEMA_REF names a schema file and, after `#`, a JSON Pointer into it: `reply.status.json`
(the whole reply body), `reply.status.json#/properties/jobs/items` (one job of it),
`defs.json#/$defs/tempo_match`. Every non-empty line of FILE must be a JSON value that the
schema allows. This is how the CLI's `--json` output is checked against the protocol's
replies (Tests/TactusCLITests). Exits 1 and lists the problems when a line does not validate.
Needs the `jsonschema` package.
"""
import json
import pathlib
import sys

from jsonschema import Draft202012Validator
from referencing import Registry, Resource


def main(arguments):
    if len(arguments) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    reference, lines = arguments
    schema_dir = pathlib.Path(__file__).resolve().parent / "schema"
    schemas = {path.name: json.loads(path.read_text()) for path in schema_dir.glob("*.json")}
    name, _, pointer = reference.partition("#")
    if name not in schemas:
        print(f"{reference}: no schema {name}")
        return 1
    registry = Registry().with_resources(
        (schema["$id"], Resource.from_contents(schema)) for schema in schemas.values())
    validator = Draft202012Validator({"$ref": schemas[name]["$id"] + ("#" + pointer if pointer else "")}, registry=registry)
    problems, checked = [], 0
    for number, line in enumerate(pathlib.Path(lines).read_text().splitlines(), start=1):
        if not line.strip():
            continue
        checked += 1
        for error in validator.iter_errors(json.loads(line)):
            problems.append(f"line {number}: {error.json_path}: {error.message}")
    if checked == 0:
        problems.append("no line to check")
    for problem in problems:
        print(problem)
    print(f"{checked} lines checked against {reference}, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
