"""The errors a Tactus client raises."""
from __future__ import annotations

from typing import Any, Dict, List, Optional


class TactusError(Exception):
    """Any failure of a request to a Tactus server."""


class NoAnswer(TactusError):
    """The server did not answer in time (is it running? are the CURVE keys right?)."""

    def __init__(self, server: str, seconds: float, attempts: int, command: Optional[str] = None) -> None:
        self.server = server
        self.seconds = seconds
        self.attempts = attempts
        self.command = command
        tries = f" ({attempts} attempts)" if attempts > 1 else ""
        to = f" to {command!r}" if command else ""
        super().__init__(f"no answer from {server}{to} within {seconds:g} s{tries}: is the server running?")


class Rejected(TactusError):
    """The server answered with an error body (protocol/SPEC.md section 7).

    ``code`` is the stable error code (``busy``, ``not-found``, ``bad-request``...), ``message``
    the server's explanation for people, ``retry_after_ms`` the wait it asks for (``busy`` and
    ``unavailable`` only). The exception's text shows the message with its control characters
    escaped, so that a server cannot forge lines or drive a terminal.
    """

    def __init__(self, body: Dict[str, Any]) -> None:
        self.body = body
        self.code: str = str(body.get("code", "internal"))
        self.message: str = str(body.get("message", ""))
        self.retry_after_ms: Optional[int] = body.get("retry_after_ms")
        self.supported_versions: Optional[List[str]] = body.get("supported_versions")
        super().__init__(printable(f"{self.code}: {self.message}"))


class InvalidReply(TactusError):
    """The server's reply is not what the protocol allows (not JSON, nested too deeply, not
    following its schema, or an upload that does not move on); ``command`` is the request's."""

    def __init__(self, command: str, problem: str) -> None:
        self.command = command
        self.problem = problem
        super().__init__(printable(f"{command}: {problem}"))


def printable(text: str) -> str:
    """`text` with its control characters (and other unprintable ones, such as bidirectional
    overrides) escaped as Python writes them: ``\\n``, ``\\x1b``, ``\\u202e``."""
    return "".join(character if character.isprintable() else repr(character)[1:-1] for character in text)
