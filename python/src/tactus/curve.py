"""CURVE keys for a Tactus client: certificate files as `tactus keys generate` writes them."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Optional

import zmq
import zmq.auth


@dataclass(frozen=True)
class CurveKeys:
    """The server's public key and this client's key pair (Z85 bytes, 40 characters each)."""

    server_public: bytes
    public: bytes
    secret: bytes

    @classmethod
    def from_files(cls, server_key: str, secret_key: str) -> "CurveKeys":
        """Keys from the server's public certificate (``server.key``) and this client's secret
        certificate (``NAME.key_secret``), the ZPL files of protocol/SPEC.md section 9.2."""
        server_public, _ = zmq.auth.load_certificate(server_key)
        public, secret = zmq.auth.load_certificate(secret_key)
        if secret is None:
            raise ValueError(f"{secret_key}: not a secret certificate (it has no secret-key)")
        return cls(server_public=server_public, public=public, secret=secret)

    @classmethod
    def from_environment(cls) -> Optional["CurveKeys"]:
        """Keys from the files named by ``TACTUS_CURVE_SERVER_KEY`` and ``TACTUS_CURVE_SECRET_KEY``
        (as the ``tactus`` commands read them), or None when neither is set."""
        server_key = os.environ.get("TACTUS_CURVE_SERVER_KEY") or None
        secret_key = os.environ.get("TACTUS_CURVE_SECRET_KEY") or None
        if server_key is None and secret_key is None:
            return None
        if server_key is None or secret_key is None:
            raise ValueError("TACTUS_CURVE_SERVER_KEY and TACTUS_CURVE_SECRET_KEY go together")
        return cls.from_files(server_key, secret_key)

    def apply(self, socket: zmq.Socket) -> None:  # type: ignore[type-arg]
        """Makes `socket` a CURVE client of the server (before it connects)."""
        socket.curve_serverkey = self.server_public
        socket.curve_publickey = self.public
        socket.curve_secretkey = self.secret
