#!/usr/bin/env python3
"""Validates example message bodies against the JSON Schemas in schema/.

Usage: validate_examples.py [--require-all] EXAMPLES_DIR

Each example is a file named <schema>--<anything>.json holding one message body, for example
request.submit--1.json is checked against schema/request.submit.json. With --require-all,
every schema (except defs.json) must have at least one example. Exits 1 and lists the
problems when any example does not validate. Needs the `jsonschema` package.
"""
import json
import pathlib
import sys

from jsonschema import Draft202012Validator
from referencing import Registry, Resource


def main(arguments):
    require_all = "--require-all" in arguments
    paths = [a for a in arguments if not a.startswith("--")]
    if len(paths) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    examples = pathlib.Path(paths[0])
    schema_dir = pathlib.Path(__file__).resolve().parent / "schema"
    schemas = {path.stem: json.loads(path.read_text()) for path in schema_dir.glob("*.json")}
    for schema in schemas.values():
        Draft202012Validator.check_schema(schema)
    registry = Registry().with_resources(
        (schema["$id"], Resource.from_contents(schema)) for schema in schemas.values())

    problems, covered, checked = [], set(), 0
    for example in sorted(examples.glob("*.json")):
        name = example.name.split("--")[0]
        if name not in schemas or name == "defs":
            problems.append(f"{example.name}: no schema {name}.json")
            continue
        covered.add(name)
        checked += 1
        validator = Draft202012Validator(schemas[name], registry=registry)
        body = json.loads(example.read_bytes())
        for error in validator.iter_errors(body):
            problems.append(f"{example.name}: {error.json_path}: {error.message}")
    if require_all:
        for name in sorted(set(schemas) - covered - {"defs"}):
            problems.append(f"{name}.json: no example")
    for problem in problems:
        print(problem)
    print(f"{checked} examples checked against {len(schemas)} schemas, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
