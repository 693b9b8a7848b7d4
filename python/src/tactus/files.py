"""The tempo of files on this machine, found by a Tactus server (by path under its library roots,
or uploaded) or by the ``tactus analyze`` command here: what the beets plugin and other tools that
hold a list of files need, one :class:`FileTempo` or :class:`FileFailure` per file."""
from __future__ import annotations

import json
import os
import subprocess
import time
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Union

from .client import FINAL_STATES, Client, Json
from .errors import Rejected, TactusError, printable


@dataclass(frozen=True)
class FileTempo:
    """A file's tempo: ``bpm`` (beats per minute), the ``confidence`` (0 to 1) and the
    ``detectors`` that found it (the consensus' detectors, or the one detector asked for)."""

    path: str
    bpm: float
    confidence: float
    detectors: List[str]


@dataclass(frozen=True)
class FileFailure:
    """A file whose tempo was not found, and why (``message`` names the file, control characters escaped)."""

    path: str
    message: str


Outcome = Union[FileTempo, FileFailure]


def missing_files(paths: Sequence[str]) -> "tuple[List[str], List[FileFailure]]":
    """The paths that are regular files, and a failure for each of the others."""
    present: List[str] = []
    failures: List[FileFailure] = []
    for path in paths:
        if os.path.isfile(path):
            present.append(path)
        else:
            problem = "the file is missing" if not os.path.exists(path) else "not a regular file"
            failures.append(FileFailure(path, printable(f"{path}: {problem}")))
    return present, failures


def tempo_from(path: str, consensus: Optional[Json], analyses: Sequence[Json], detector: Optional[str]) -> Outcome:
    """A file's tempo from the consensus, or with ``detector`` from that detector's analysis."""
    if detector is None:
        bpm = consensus.get("bpm") if consensus else None
        if bpm is None:
            return FileFailure(path, printable(f"{path}: the detectors found no tempo"))
        return FileTempo(path, float(bpm), float(consensus.get("confidence", 0.0)), list(consensus.get("detectors", [])))
    for analysis in analyses:
        if analysis.get("detector") == detector:
            if analysis.get("bpm") is None:
                reason = analysis.get("reason") or "no tempo found"
                return FileFailure(path, printable(f"{path}: {detector}: {reason}"))
            return FileTempo(path, float(analysis["bpm"]), float(analysis["confidence"]), [detector])
    return FileFailure(path, printable(f"{path}: no analysis by the detector {detector}"))


class AnalyzeCommand:
    """``tactus analyze --json`` on this machine (no server): ``binary`` is the ``tactus`` command."""

    def __init__(self, binary: str = "tactus", detector: Optional[str] = None, timeout: float = 600.0) -> None:
        self.binary = binary
        self.detector = detector
        self.timeout = timeout

    #: The most files given to one ``tactus analyze`` (its command line stays short).
    batch = 200

    def tempi(self, paths: Sequence[str]) -> List[Outcome]:
        """One outcome per path, in order."""
        present, failures = missing_files(paths)
        outcomes: Dict[str, Outcome] = {failure.path: failure for failure in failures}
        for start in range(0, len(present), self.batch):
            outcomes.update(self._analyse(present[start:start + self.batch]))
        return [outcomes[path] for path in paths]

    def _analyse(self, paths: List[str]) -> Dict[str, Outcome]:
        command = [self.binary, "analyze", "--json"]
        if self.detector is not None:
            command += ["--detector", self.detector]
        try:
            finished = subprocess.run(command + ["--"] + paths, capture_output=True, text=True,
                                      timeout=self.timeout * len(paths), check=False)
        except FileNotFoundError:
            raise TactusError(printable(f"{self.binary}: no such command: install tactus or configure a server")) from None
        except subprocess.TimeoutExpired:
            raise TactusError(printable(f"{self.binary} analyze: no answer within {self.timeout:g} s a file")) from None
        lines: Dict[str, Json] = {}
        for line in finished.stdout.splitlines():
            try:
                report = json.loads(line)
            except ValueError:
                continue
            if isinstance(report, dict) and isinstance(report.get("file"), str):
                lines[report["file"]] = report
        outcomes: Dict[str, Outcome] = {}
        for path in paths:
            report = lines.get(path)
            if report is None:
                problem = finished.stderr.strip().splitlines()[-1:] or [f"exit status {finished.returncode}"]
                outcomes[path] = FileFailure(path, printable(f"{path}: tactus analyze printed nothing for it: {problem[0]}"))
            elif report.get("error"):
                outcomes[path] = FileFailure(path, printable(str(report["error"].get("message", f"{path}: not analysed"))))
            else:
                outcomes[path] = tempo_from(path, report.get("consensus"), report.get("analyses", []), self.detector)
        return outcomes


class ServerAnalysis:
    """A Tactus server finds the files' tempi: by path when the files lie under its library
    roots (``server_directory`` maps ``local_directory``, where this machine sees them, to where
    the server does), else by upload.

    ``upload``: ``"auto"`` (by path, uploading a file the server says is outside its roots),
    ``"yes"`` (always upload) or ``"no"`` (by path only: a file outside the roots fails).
    Waits ``timeout`` seconds at the most for the analyses."""

    def __init__(self, client: Client, *, detector: Optional[str] = None, upload: str = "auto",
                 local_directory: Optional[str] = None, server_directory: Optional[str] = None,
                 timeout: float = 600.0, poll_interval: float = 0.25) -> None:
        if upload not in ("auto", "yes", "no"):
            raise ValueError(f"upload must be auto, yes or no, not {upload!r}")
        self.client = client
        self.detector = detector
        self.upload = upload
        self.local_directory = local_directory
        self.server_directory = server_directory
        self.timeout = timeout
        self.poll_interval = poll_interval

    def server_path(self, path: str) -> str:
        """Where the server sees the file at ``path``."""
        if self.local_directory and self.server_directory:
            relative = os.path.relpath(path, self.local_directory)
            if not relative.startswith(os.pardir):
                return os.path.join(self.server_directory, relative)
        return path

    def tempi(self, paths: Sequence[str]) -> List[Outcome]:
        present, failures = missing_files(paths)
        outcomes: Dict[str, Outcome] = {failure.path: failure for failure in failures}
        submitted: Dict[str, Json] = {}  # path -> the submit answer: song and jobs
        detectors = [self.detector] if self.detector is not None else None
        for path in present:
            try:
                if self.upload != "yes":
                    try:
                        submitted[path] = self.client.submit_path(self.server_path(path), detectors=detectors)
                        continue
                    except Rejected as refusal:
                        if refusal.code != "forbidden" or self.upload == "no":
                            raise
                with open(path, "rb") as file:
                    audio = file.read()
                submitted[path] = self.client.submit(audio, name=os.path.basename(path), detectors=detectors)
            except Rejected as refusal:
                outcomes[path] = FileFailure(path, printable(f"{path}: {refusal}"))
        outcomes.update(self._wait(submitted))
        return [outcomes[path] for path in paths]

    def _wait(self, submitted: Dict[str, Json]) -> Dict[str, Outcome]:
        """Polls the jobs each submission started until they are final, then reads the results."""
        deadline = time.monotonic() + self.timeout
        outcomes: Dict[str, Outcome] = {}
        waiting = dict(submitted)
        while waiting:
            for path, answer in list(waiting.items()):
                song, ours = answer["song"], {job["job"] for job in answer["jobs"]}
                jobs = [job for job in self.client.status(song=song)["jobs"] if job["job"] in ours] or answer["jobs"]
                if all(job["state"] in FINAL_STATES for job in jobs):
                    result = self.client.result(song)
                    outcomes[path] = tempo_from(path, result["consensus"], result["analyses"], self.detector)
                    del waiting[path]
            if waiting:
                if time.monotonic() > deadline:
                    for path in waiting:
                        outcomes[path] = FileFailure(path, printable(f"{path}: still being analysed after {self.timeout:g} s"))
                    break
                time.sleep(self.poll_interval)
        return outcomes
