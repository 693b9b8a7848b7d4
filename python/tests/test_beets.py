"""The beets plugin (beetsplug.tactus) in real beets from PyPI: `beet import -A` a folder of songs
synthesised here, `beet tactus`, then `beet ls` and the files' tags read back with mutagen.
`make deps` installs beets in .build/python-tests, the Python `make test` runs these tests with."""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional

import pytest

from conftest import ROOT, click_track, running_server, tactus_binary

pytest.importorskip("beets", reason="beets is installed for the tests by `make deps` (.build/python-tests)")
mutagen = pytest.importorskip("mutagen")
from mutagen.id3 import TIT2, TPE1  # noqa: E402
from mutagen.wave import WAVE  # noqa: E402

from tactus import Client  # noqa: E402

TEMPI = (100, 150)


class Beets:
    """A beets configuration and library in a temporary folder, and the `beet` command on it."""

    def __init__(self, home: Path, music: Path, plugin: Dict[str, object], write: bool) -> None:
        self.home = home
        self.music = music
        home.mkdir(parents=True, exist_ok=True)
        lines = [f"directory: {music}", f"library: {home / 'library.db'}", "plugins: [tactus]",
                 "import:", f"  write: {'yes' if write else 'no'}", "  copy: yes", "  quiet: yes",
                 "tactus:", f"  binary: {tactus_binary()}"]
        lines += [f"  {key}: {value}" for key, value in plugin.items()]
        (home / "config.yaml").write_text("\n".join(lines) + "\n")

    def run(self, *arguments: str, check: bool = True) -> subprocess.CompletedProcess:  # type: ignore[type-arg]
        environment = dict(os.environ, BEETSDIR=str(self.home),
                           PYTHONPATH=os.pathsep.join([str(ROOT / "python" / "src"), os.environ.get("PYTHONPATH", "")]))
        beet = Path(sys.executable).parent / "beet"
        finished = subprocess.run([str(beet), *arguments], env=environment, capture_output=True, text=True, timeout=300)
        if check:
            assert finished.returncode == 0, (arguments, finished.stdout, finished.stderr)
        return finished

    def listing(self, *query: str) -> List[List[str]]:
        """`beet ls -f` of the title, bpm and the plugin's attributes, one list per item."""
        out = self.run("ls", "-f", "$title|$bpm|$tactus_bpm|$tactus_confidence|$tactus_detectors", *query).stdout
        return sorted(line.split("|") for line in out.splitlines() if line)

    def files(self) -> Dict[str, Path]:
        """The imported files by title."""
        return {WAVE(path).tags["TIT2"].text[0]: path for path in sorted(self.music.rglob("*.wav"))}


@pytest.fixture(scope="module")
def tagged_songs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Click tracks at 100 and 150 BPM with a title and an artist, as beets imports them."""
    folder = tmp_path_factory.mktemp("beets-songs")
    for bpm in TEMPI:
        path = click_track(folder / f"click-{bpm}.wav", bpm, seconds=20)
        song = WAVE(path)
        song.add_tags()
        song.tags.add(TIT2(encoding=3, text=f"Click {bpm}"))
        song.tags.add(TPE1(encoding=3, text="Metronome"))
        song.save()
    return folder


def bpm_tag(path: Path) -> Optional[str]:
    frame = mutagen.File(path).tags.get("TBPM")
    return frame.text[0] if frame else None


def assert_tempi_stored(rows: List[List[str]], detectors: str = "autocorrelation,comb-filter,statistical-energy") -> None:
    assert [row[0] for row in rows] == [f"Click {bpm}" for bpm in TEMPI]
    for (title, bpm, tactus_bpm, confidence, stored_detectors), expected in zip(rows, TEMPI):
        assert int(bpm) == expected, rows
        assert abs(float(tactus_bpm) - expected) < 1, rows
        assert 0 < float(confidence) <= 1, rows
        assert stored_detectors == detectors, rows


def test_without_a_server_tactus_analyze_finds_the_tempi_and_pretend_stores_nothing(tmp_path: Path,
                                                                                     tagged_songs: Path) -> None:
    beets = Beets(tmp_path / "beets", tmp_path / "music", {}, write=False)
    beets.run("import", "-A", str(tagged_songs))
    pretend = beets.run("tactus", "-p")
    assert "100.0 BPM" in pretend.stdout and "150.0 BPM" in pretend.stdout, pretend.stdout
    assert [row[1] for row in beets.listing()] == ["0", "0"]

    beets.run("tactus", "-W")
    assert_tempi_stored(beets.listing())
    assert [row[0] for row in beets.listing("bpm:140..160")] == ["Click 150"]
    assert len(beets.listing("tactus_confidence:0.3..")) == 2
    assert [bpm_tag(path) for path in beets.files().values()] == [None, None]  # -W: no tags written

    # Items that have a tempo are left alone unless -f; -w writes the tags through beets.
    beets.run("tactus", "-w")
    assert [bpm_tag(path) for path in beets.files().values()] == [None, None]
    beets.run("tactus", "-f", "-w", "--detector", "autocorrelation")
    assert_tempi_stored(beets.listing(), detectors="autocorrelation")
    assert {title: bpm_tag(path) for title, path in beets.files().items()} == {"Click 100": "100", "Click 150": "150"}


def test_min_confidence_keeps_unsure_tempi_out_and_a_missing_file_is_an_error_naming_it(tmp_path: Path,
                                                                                       tagged_songs: Path) -> None:
    beets = Beets(tmp_path / "beets", tmp_path / "music", {}, write=False)
    beets.run("import", "-A", str(tagged_songs))
    beets.run("tactus", "--min-confidence", "0.999")
    assert [row[1] for row in beets.listing()] == ["0", "0"]
    refused = beets.run("tactus", "--min-confidence", "5", check=False)
    assert refused.returncode != 0 and "the minimum confidence is 0 to 1, not 5" in refused.stderr, refused.stderr

    # The file of the last item gone: the others keep their own tempi.
    gone = beets.files()["Click 150"]
    gone.unlink()
    failed = beets.run("tactus", check=False)
    assert failed.returncode != 0
    assert f"{gone}: the file is missing" in failed.stderr, failed.stderr
    assert "1 of 2 items not analysed" in failed.stderr, failed.stderr
    assert [row[:2] for row in beets.listing()] == [["Click 100", "100"], ["Click 150", "0"]]


def test_auto_analyses_imports_by_path_on_a_server_with_the_music_under_its_library_root(tmp_path: Path,
                                                                                         tagged_songs: Path) -> None:
    music = tmp_path / "music"
    music.mkdir()
    with running_server(tmp_path / "data", "--library-root", str(music)) as server:
        beets = Beets(tmp_path / "beets", music, {"server": server.frontend, "upload": "no", "auto": "yes"}, write=True)
        beets.run("import", "-A", str(tagged_songs))
        assert_tempi_stored(beets.listing())
        files = beets.files()
        # import.write wrote the tags through beets, after the analysis.
        assert {title: bpm_tag(path) for title, path in files.items()} == {"Click 100": "100", "Click 150": "150"}
        with Client(server.frontend, timeout=10) as client:
            # By path: the server recorded where the files lie under its root (an upload has no location).
            found = client.resolve([str(files["Click 150"])])[0]
            assert "song" in found, found
            locations = client.result(found["song"]).get("locations", [])
            assert [(location["root"], location["path"]) for location in locations] == \
                [(str(music), str(files["Click 150"].relative_to(music)))]


def test_a_server_elsewhere_gets_the_songs_uploaded(tmp_path: Path, tagged_songs: Path) -> None:
    beets = Beets(tmp_path / "beets", tmp_path / "music", {}, write=False)
    beets.run("import", "-A", str(tagged_songs))
    with running_server(tmp_path / "data") as server:
        beets.run("tactus", "--server", server.frontend)
        assert_tempi_stored(beets.listing())
        with Client(server.frontend, timeout=10) as client:
            for path in beets.files().values():
                result = client.result(hashlib.sha256(path.read_bytes()).hexdigest())
                assert result["consensus"]["bpm"] is not None and not result.get("locations")


def test_an_unreachable_server_is_a_warning_on_import_and_an_error_for_the_command(tmp_path: Path,
                                                                                   tagged_songs: Path) -> None:
    unreachable = "tcp://127.0.0.1:9"
    beets = Beets(tmp_path / "beets", tmp_path / "music", {"server": unreachable, "auto": "yes", "timeout": 2},
                  write=True)
    imported = beets.run("import", "-A", str(tagged_songs))
    assert f"no answer from {unreachable}" in imported.stdout + imported.stderr
    assert [row[:2] for row in beets.listing()] == [["Click 100", "0"], ["Click 150", "0"]]
    failed = beets.run("tactus", check=False)
    assert failed.returncode != 0 and f"no answer from {unreachable}" in failed.stderr, failed.stderr


def test_the_plugin_is_installed_with_the_package(tmp_path: Path) -> None:
    """`pip install ./python` brings beetsplug.tactus beside beets' own plugins."""
    source = tmp_path / "python"
    shutil.copytree(ROOT / "python", source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                    "--target", str(target), str(source)], check=True, timeout=300, capture_output=True)
    assert (target / "beetsplug" / "tactus.py").is_file()
    assert not (target / "beetsplug" / "__init__.py").exists()  # beets' namespace package stays whole
