"""A beets plugin: the tempo (BPM) of the library's items, found by Tactus.

``beet tactus [QUERY]`` analyses the matching items that have no tempo yet (``-f``: all of
them) through a Tactus server (by path when the music lies under the server's
``--library-root``, else uploaded), or with ``tactus analyze --json`` on this machine when no
server is configured. It stores beets' ``bpm`` (an integer) and the flexible attributes
``tactus_bpm``, ``tactus_confidence`` and ``tactus_detectors``. With ``auto: yes`` items are
analysed as they are imported; a server that cannot be reached is then a warning, never a
failed import. See docs/BEETS.md.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, List, Optional, Sequence

from beets import ui
from beets.dbcore import types
from beets.plugins import BeetsPlugin

from tactus import Client, TactusError
from tactus.errors import printable
from tactus.files import AnalyzeCommand, FileFailure, FileTempo, Outcome, ServerAnalysis

if TYPE_CHECKING:
    import optparse

    from beets.importer import ImportSession, ImportTask
    from beets.library import Item, Library


class TactusPlugin(BeetsPlugin):
    """``beet tactus``, and the analysis of imported items with ``auto: yes``."""

    item_types = {
        "tactus_bpm": types.Float(2),
        "tactus_confidence": types.Float(2),
        "tactus_detectors": types.STRING,
    }

    def __init__(self) -> None:
        super().__init__()
        self.config.add({
            "server": None,             # tcp://HOST:PORT of a `tactus serve`; none: `tactus analyze` here
            "upload": "auto",           # auto: by path under the server's roots, else upload; yes; no
            "server_directory": None,   # where the server sees beets' `directory` (by path only)
            "binary": "tactus",         # the tactus command, without a server
            "detector": None,           # one detector's tempo instead of the consensus
            "min_confidence": 0.0,      # tempi found with less confidence are not stored
            "timeout": 600.0,           # seconds to wait for the analyses of one command
            "auto": False,              # analyse items as they are imported
            "force": False,             # analyse items that already have a tempo
        })
        if self.config["auto"].get(bool):
            self.register_listener("import_task_files", self.imported)

    # The command -----------------------------------------------------------------------

    def commands(self) -> List[ui.Subcommand]:
        command = ui.Subcommand("tactus", help="find the tempo (BPM) of items with Tactus")
        parser = command.parser
        parser.add_option("-f", "--force", action="store_true", default=False,
                          help="analyse items that already have a tempo too")
        parser.add_option("--detector", metavar="NAME", help="store this detector's tempo, not the consensus")
        parser.add_option("--min-confidence", dest="min_confidence", type="float", metavar="X",
                          help="do not store tempi found with a confidence below X (0 to 1)")
        parser.add_option("--server", metavar="URL", help="the Tactus server (tcp://HOST:PORT)")
        parser.add_option("-w", "--write", action="store_true", default=None, help="write tags to the files")
        parser.add_option("-W", "--nowrite", dest="write", action="store_false", help="do not write tags")
        parser.add_option("-p", "--pretend", action="store_true", default=False,
                          help="show the tempi found without storing them")
        command.func = self.command
        return [command]

    def command(self, lib: "Library", opts: "optparse.Values", args: Sequence[str]) -> None:
        force = opts.force or self.config["force"].get(bool)
        items = [item for item in lib.items(args) if force or not item.get("bpm")]
        if not items:
            self._log.info("no items without a tempo (-f analyses every item)")
            return
        detector = opts.detector or self.config["detector"].get()
        min_confidence = opts.min_confidence
        if min_confidence is None:
            min_confidence = self.config["min_confidence"].as_number()
        if not 0 <= min_confidence <= 1:
            raise ui.UserError(f"tactus: the minimum confidence is 0 to 1, not {min_confidence:g}")
        try:
            outcomes = self.analyse(items, detector, opts.server)
        except TactusError as error:
            raise ui.UserError(f"tactus: {error}") from None
        failed = self.apply(items, outcomes, min_confidence, write=ui.should_write(opts.write), pretend=opts.pretend)
        if failed:
            raise ui.UserError(f"tactus: {failed} of {len(items)} items not analysed")

    # Importing -------------------------------------------------------------------------

    def imported(self, session: "ImportSession", task: "ImportTask") -> None:
        """Analyses the imported items once their files are in place (copied or moved into the
        library, so under a server's library root where beets' directory is one), and writes
        the tags with import.write. A failure is a warning: the import goes on."""
        items = [item for item in task.imported_items() if self.config["force"].get(bool) or not item.get("bpm")]
        if not items:
            return
        try:
            outcomes = self.analyse(items, self.config["detector"].get(), None)
        except TactusError as error:
            self._log.warning("no tempo for {} imported items: {}", len(items), error)
            return
        self.apply(items, outcomes, self.config["min_confidence"].as_number(), write=ui.should_write(), pretend=False)

    # Analysing and storing --------------------------------------------------------------

    def analyse(self, items: Sequence["Item"], detector: Optional[str], server: Optional[str]) -> List[Outcome]:
        """Each item's tempo, through the server when one is configured, else `tactus analyze`."""
        paths = [os.fsdecode(item.path) for item in items]
        timeout = float(self.config["timeout"].as_number())
        server = server or self.config["server"].get()
        if not server:
            return AnalyzeCommand(self.config["binary"].as_str(), detector, timeout).tempi(paths)
        directory = self.config["server_directory"].get()
        with Client(server, timeout=min(10.0, timeout)) as client:
            analysis = ServerAnalysis(client, detector=detector, upload=self.upload_choice(),
                                      local_directory=_beets_directory() if directory else None,
                                      server_directory=directory, timeout=timeout)
            return analysis.tempi(paths)

    def upload_choice(self) -> str:
        """The ``upload`` option: ``auto``, ``yes`` or ``no`` (YAML reads the last two as booleans)."""
        value = self.config["upload"].get()
        if isinstance(value, bool):
            return "yes" if value else "no"
        if value not in ("auto", "yes", "no"):
            raise ui.UserError(printable(f"tactus: upload must be auto, yes or no, not {value!r}"))
        return str(value)

    def apply(self, items: Sequence["Item"], outcomes: Sequence[Outcome], min_confidence: float, *,
              write: bool, pretend: bool) -> int:
        """Stores (or with ``pretend`` shows) each item's tempo; returns how many failed."""
        failed = 0
        for item, outcome in zip(items, outcomes):
            if isinstance(outcome, FileFailure):
                failed += 1
                self._log.error("{}", outcome.message)
                continue
            assert isinstance(outcome, FileTempo)
            shown = printable(outcome.path)
            if outcome.confidence < min_confidence:
                self._log.info("{}: {:.1f} BPM with confidence {:.2f}, below {:.2f}: not stored",
                               shown, outcome.bpm, outcome.confidence, min_confidence)
                continue
            if pretend:
                ui.print_(f"{shown}: {outcome.bpm:.1f} BPM, confidence {outcome.confidence:.2f} "
                          f"({', '.join(outcome.detectors)})")
                continue
            item["bpm"] = int(round(outcome.bpm))
            item["tactus_bpm"] = round(outcome.bpm, 2)
            item["tactus_confidence"] = round(outcome.confidence, 3)
            item["tactus_detectors"] = ",".join(outcome.detectors)
            self._log.info("{}: {:.1f} BPM (confidence {:.2f})", shown, outcome.bpm, outcome.confidence)
            if write:
                item.try_write()
            item.store()
        return failed


def _beets_directory() -> str:
    from beets import config

    return config["directory"].as_filename()
