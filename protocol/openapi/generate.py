#!/usr/bin/env python3
"""Writes the OpenAPI document of `tactus web` into Sources/TactusWeb/Resources/openapi.yaml, a
resource embedded in the binary (`PackageResources.openapi_yaml`).

The document is paths.yaml (the endpoints, written by hand) with the wire protocol's JSON
Schemas of ../schema as its components: every reply body of the HTTP API is the protocol's own
body, described once. Each schema file becomes a component named after it (`reply.query`), its
local `$defs` components named `FILE.DEF`, and `defs.json`'s definitions components of their own
names; `$ref`s are rewritten to match. OpenAPI 3.1 schemas are JSON Schema 2020-12, so nothing
else changes.

Every endpoint answers with a protocol reply of a command the protocol has (`reply.<command>`,
which the Swift suite's schema test ties to the table of commands), `reply.error`, or a body that
is no JSON reply (a figure, an event stream).

`--check` writes nothing and fails when the committed file differs from what it would write
(`make test` runs it).
"""
import json
import os
import re
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SCHEMAS = os.path.join(ROOT, "protocol", "schema")
OUTPUT = os.path.join(ROOT, "Sources", "TactusWeb", "Resources", "openapi.yaml")


def rewrite(node, file_name):
    """The schema `node` of `file_name` with its `$ref`s pointing at components."""
    if isinstance(node, dict):
        result = {}
        for key, value in node.items():
            if key in ("$schema", "$id"):
                continue
            if key == "$ref":
                result[key] = reference(value, file_name)
            elif key == "$defs":
                continue
            else:
                result[key] = rewrite(value, file_name)
        return result
    if isinstance(node, list):
        return [rewrite(item, file_name) for item in node]
    return node


def reference(ref, file_name):
    if ref.startswith("defs.json#/$defs/"):
        return "#/components/schemas/" + ref.split("/")[-1]
    if ref.startswith("#/$defs/"):
        name = ref.split("/")[-1]
        return "#/components/schemas/" + (name if file_name == "defs" else f"{file_name}.{name}")
    match = re.fullmatch(r"([a-z.]+)\.json", ref)
    if match:
        return "#/components/schemas/" + match.group(1)
    raise SystemExit(f"generate.py: cannot rewrite $ref {ref!r} of {file_name}.json")


def components():
    schemas = {}
    for entry in sorted(os.listdir(SCHEMAS)):
        if not entry.endswith(".json"):
            continue
        name = entry[: -len(".json")]
        if not (name == "defs" or name.startswith("reply.") or name.startswith("event.") or name.startswith("request.")):
            continue
        with open(os.path.join(SCHEMAS, entry)) as file:
            schema = json.load(file)
        for def_name, definition in schema.get("$defs", {}).items():
            schemas[def_name if name == "defs" else f"{name}.{def_name}"] = rewrite(definition, name)
        if name != "defs":
            schemas[name] = rewrite(schema, name)
    return schemas


def block_strings(dumper, text):
    """Multi-line strings as YAML literal blocks, the way paths.yaml writes them."""
    style = "|" if "\n" in text else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


yaml.SafeDumper.add_representer(str, block_strings)


def commands():
    """The protocol's commands: those with a request schema (the Swift suite's schema test
    checks these against the table of commands, `ClientCommands.standard`)."""
    return {entry[len("request."):-len(".json")] for entry in os.listdir(SCHEMAS)
            if entry.startswith("request.") and entry.endswith(".json")}


def check_answers(openapi):
    """Every endpoint answers with a protocol reply (`reply.<command>`) of a command the
    protocol has, or with none: an HTTP body is never a shape of its own."""
    known = commands()
    for path, operations in openapi["paths"].items():
        for method, operation in operations.items():
            for status, response in operation.get("responses", {}).items():
                for content in response.get("content", {}).values():
                    ref = content.get("schema", {}).get("$ref", "")
                    match = re.fullmatch(r"#/components/schemas/reply\.([a-z-]+)", ref)
                    if ref and not match:
                        raise SystemExit(f"generate.py: {method.upper()} {path} answers {status} with {ref}, not a protocol reply")
                    if match and match.group(1) != "error" and match.group(1) not in known:
                        raise SystemExit(f"generate.py: {method.upper()} {path} answers {status} with reply.{match.group(1)}, "
                                         "which is no command of the protocol")


def document():
    with open(os.path.join(HERE, "paths.yaml")) as file:
        openapi = yaml.safe_load(file)
    check_answers(openapi)
    openapi["components"]["schemas"] = components()
    return yaml.safe_dump(openapi, sort_keys=False, allow_unicode=True, width=120)


def generated(text):
    return (
        "# Generated by protocol/openapi/generate.py from protocol/openapi/paths.yaml and protocol/schema:\n"
        "# edit those and run `python3 protocol/openapi/generate.py`, not this file.\n" + text
    )


def main(argv):
    output = generated(document())
    if "--check" in argv:
        current = open(OUTPUT).read() if os.path.exists(OUTPUT) else ""
        if current != output:
            print(f"{os.path.relpath(OUTPUT, ROOT)} is out of date: run python3 protocol/openapi/generate.py", file=sys.stderr)
            return 1
        print(f"openapi: {os.path.relpath(OUTPUT, ROOT)} is up to date")
        return 0
    with open(OUTPUT, "w") as file:
        file.write(output)
    print(f"wrote {os.path.relpath(OUTPUT, ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
