"""What a server sends, read as the protocol allows it before the client uses any of it: every
body is checked against its JSON Schema (``protocol/schema``, in this package as ``schemas``)."""
from __future__ import annotations

import json
import math
from functools import lru_cache
from importlib import resources
from typing import Any, FrozenSet, Optional

from jsonschema import Draft202012Validator

from .errors import InvalidReply

SCHEMAS = resources.files("tactus") / "schemas"
#: The schema file of the types the others share (``defs.json#/$defs/song_id``...).
SHARED = "defs.json"
#: The most of a schema error's text kept in an :class:`InvalidReply` (it quotes the value).
PROBLEM_CHARACTERS = 300


def read_body(frame: bytes, kind: str, command: str) -> Any:
    """The JSON body in `frame`, once it is what the schema `kind` (``reply.status``,
    ``reply.error``, ``event.song.done``...) allows; a kind with no schema (a command or event
    newer than this client) must be a JSON object. Otherwise :class:`InvalidReply` naming
    `command`: a body that is not JSON (``NaN`` and numbers too large for a float included),
    one nested deeper than Python's recursion limit, or one that breaks its schema."""
    try:
        body = json.loads(frame, parse_constant=_not_json, parse_float=_finite)
        problem = _problem(kind, body)
    except RecursionError:
        problem = "the body is nested too deeply"
    except ValueError as error:  # UnicodeDecodeError is one
        problem = f"the body is not JSON: {error}"
    if problem is not None:
        raise InvalidReply(command, problem)
    return body


def _problem(kind: str, body: Any) -> Optional[str]:
    if kind not in _kinds():
        return None if isinstance(body, dict) else "the body is not a JSON object"
    error = next(_validator(kind).iter_errors(body), None)
    if error is None:
        return None
    where = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in error.absolute_path)
    text = error.message if len(error.message) <= PROBLEM_CHARACTERS else error.message[:PROBLEM_CHARACTERS] + "…"
    return f"the body does not follow {kind}.json at ${where}: {text}"


@lru_cache(maxsize=1)
def _kinds() -> FrozenSet[str]:
    return frozenset(entry.name[:-len(".json")] for entry in SCHEMAS.iterdir() if entry.name.endswith(".json"))


@lru_cache(maxsize=None)
def _validator(kind: str) -> Draft202012Validator:
    schema = _as_received(json.loads((SCHEMAS / f"{kind}.json").read_text(encoding="utf-8")))
    schema.setdefault("$defs", {})[SHARED] = _as_received(json.loads((SCHEMAS / SHARED).read_text(encoding="utf-8")))
    return Draft202012Validator(schema)


def _as_received(node: Any) -> Any:
    """A schema as a receiver applies it: fields it does not know are allowed (the schemas say
    exactly what a sender writes, and receivers MUST ignore unknown fields: SPEC.md section
    2), and ``defs.json#/...`` points into a copy of defs.json under ``$defs``, which works
    with every jsonschema version (no ``$id`` opens another resource)."""
    if isinstance(node, list):
        return [_as_received(item) for item in node]
    if not isinstance(node, dict):
        return node
    received = {}
    for key, value in node.items():
        if key in ("$id", "$schema") or (key == "additionalProperties" and value is False):
            continue
        if key == "$ref" and value.startswith(SHARED + "#"):
            value = f"#/$defs/{SHARED}" + value[len(SHARED) + 1:]
        received[key] = _as_received(value)
    return received


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not a JSON number")


def _finite(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(f"the number {text[:40]} is too large for a float")
    return number
