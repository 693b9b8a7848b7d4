"""Tactus: a Python client of a Tactus tempo-analysis server.

>>> import tactus                                                      # doctest: +SKIP
>>> with tactus.Client("tcp://127.0.0.1:5555") as server:
...     songs = server.query(165, 175, octave=True, limit=20)

See README.md and the examples folder.
"""
from .client import Client, Event, EventStream, Progress, Submitted, events_endpoint, to_frame
from .curve import CurveKeys
from .errors import InvalidReply, NoAnswer, Rejected, TactusError

__all__ = [
    "Client", "CurveKeys", "Event", "EventStream", "InvalidReply", "NoAnswer", "Progress", "Rejected", "Submitted",
    "TactusError", "events_endpoint", "to_frame",
]
__version__ = "0.1.0"
