"""`tactus export --rekordbox`: the library written as a rekordbox XML collection, read back with
pyrekordbox (an independent reader, from PyPI) and every field checked against the library as
`tactus query --json` shows it; over a server with the music under its library root and with
`--db`. `make deps` installs pyrekordbox in .build/python-tests."""
from __future__ import annotations

import json
import struct
import subprocess
import time
from pathlib import Path
from typing import Dict

import pytest

from conftest import click_track, running_server, tactus_binary

rbxml = pytest.importorskip("pyrekordbox.rbxml", reason="pyrekordbox is installed for the tests by `make deps` (.build/python-tests)")

# File names a DJ's collection holds: spaces, '#', '&', '%', non-ASCII.
SONGS = {"Intro #1 & Co 100%.wav": 100.0, "Clíck 123.wav": 123.0, "plain-150.wav": 150.0}


def add_riff_info(path: Path, title: str, artist: str) -> None:
    """Appends a RIFF LIST/INFO chunk with INAM (title) and IART (artist), as libsndfile reads them."""
    def sub(key: bytes, text: str) -> bytes:
        data = text.encode("utf-8") + b"\0"
        return key + struct.pack("<I", len(data)) + data + (b"\0" if len(data) % 2 else b"")
    info = b"INFO" + sub(b"INAM", title) + sub(b"IART", artist)
    data = bytearray(path.read_bytes()) + b"LIST" + struct.pack("<I", len(info)) + info
    data[4:8] = struct.pack("<I", len(data) - 8)
    path.write_bytes(bytes(data))


def tactus(*arguments: str, check: bool = True) -> subprocess.CompletedProcess:  # type: ignore[type-arg]
    return subprocess.run([tactus_binary(), *arguments], capture_output=True, text=True, timeout=300, check=check)


@pytest.fixture(scope="module")
def music(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("dj-music")
    for name, bpm in SONGS.items():
        path = click_track(folder / name, bpm, seconds=40)
        # Markup and a control character (which XML cannot hold) in the tags.
        tags = {123.0: ("Clicks <at> 123", 'Metronome & "Friends"'), 150.0: ("Bell\x07 150", "It's ]]> over")}.get(bpm)
        if tags:
            add_riff_info(path, *tags)
    return folder


def library_songs(*source: str) -> Dict[str, dict]:
    """Every song of the library by path, as `tactus query --json` gives it."""
    lines = tactus("query", "--bpm", "1..1000", "--json", *source).stdout.splitlines()
    return {json.loads(line)["paths"][0]: json.loads(line) for line in lines if json.loads(line)["paths"]}


def check_collection(path: Path, songs: Dict[str, dict]) -> None:
    """The collection at `path` holds exactly `songs`, each field as the library says."""
    collection = rbxml.RekordboxXml(str(path))
    tracks = collection.get_tracks()
    assert len(tracks) == len(songs)
    by_path = {}
    for track in tracks:
        # pyrekordbox decodes a Location as a Windows-minded relative path ("home/u/a.wav").
        location = "/" + track["Location"].lstrip("/")
        by_path[location] = track
    assert set(by_path) == set(songs)
    for location, track in by_path.items():
        song = songs[location]
        # Control characters, which XML 1.0 cannot hold, are left out.
        assert track["Name"] == "".join(c for c in (song["title"] or song["file"]) if ord(c) >= 0x20)
        assert (track["Artist"] or None) == song["artist"]
        assert track["TotalTime"] == round(song["duration_s"])
        # The grid's tempo (the consensus refined to the onsets) is the track's tempo too.
        assert track["AverageBpm"] == pytest.approx(song["beat_grid"]["bpm"], abs=0.005)
        assert track["Kind"] == "WAV File"
        grid = song["beat_grid"]
        tempo, = track.tempos
        assert tempo["Inizio"] == pytest.approx(grid["first_beat_s"], abs=0.0005)
        assert tempo["Bpm"] == pytest.approx(grid["bpm"], abs=0.0005)
        assert (tempo["Metro"], tempo["Battito"]) == ("4/4", 1)
        # The clicks start at 0 s: the grid's beats fall on them (within 10 ms), at the tempo.
        period = 60 / tempo["Bpm"]
        offset = tempo["Inizio"] % (60 / round(song["bpm"]))
        assert min(offset, 60 / round(song["bpm"]) - offset) < 0.010, (location, tempo["Inizio"])
        assert period == pytest.approx(60 / round(song["bpm"]), rel=0.001)
    everything = collection.get_playlist("Tactus")
    assert sorted(everything.get_tracks()) == sorted(int(track["TrackID"]) for track in tracks)
    bands = collection.get_playlist("Tactus by tempo")
    assert sorted(node.name for node in bands.get_playlists()) == ["100-109 BPM", "120-129 BPM", "150-159 BPM"]


def wait_for_analyses(server: str, count: int) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        songs = library_songs("--server", server)
        if len(songs) == count and all("beat_grid" in song for song in songs.values()):
            return
        time.sleep(0.5)
    pytest.fail(f"the server did not analyse {count} songs in 120 s")


def test_over_a_server_every_field_matches_the_library_and_uploads_are_named_as_left_out(tmp_path: Path,
                                                                                            music: Path) -> None:
    with running_server(tmp_path / "data", "--library-root", str(music)) as server:
        tactus("scan", "--server", server.frontend)
        wait_for_analyses(server.frontend, len(SONGS))
        uploaded = click_track(tmp_path / "uploaded-90.wav", 90, seconds=20)
        tactus("submit", str(uploaded), "--server", server.frontend, "--wait")
        songs = library_songs("--server", server.frontend)
        output = tmp_path / "out" / "collection.xml"
        output.parent.mkdir()
        exported = tactus("export", "--rekordbox", str(output), "--server", server.frontend, "--json")
        report = json.loads(exported.stdout)
        assert report["tracks"] == len(SONGS) and report["with_grid"] == len(SONGS)
        assert [entry["file"] for entry in report["omitted"]] == ["uploaded-90.wav"]
        assert "uploaded-90.wav" in exported.stderr and "no known path" in exported.stderr
        check_collection(output, songs)
        # A range: only the songs in it, and the playlist named after it.
        ranged = tmp_path / "out" / "fast.xml"
        tactus("export", "--rekordbox", str(ranged), "--bpm", "140..160", "--server", server.frontend)
        collection = rbxml.RekordboxXml(str(ranged))
        fast, = [song for song in songs.values() if song["file"] == "plain-150.wav"]
        assert [(track["Name"], track["Artist"]) for track in collection.get_tracks()] == [("Bell 150", "It's ]]> over")]
        assert fast["title"] == "Bell\x07 150"
        assert collection.get_playlist("Tactus 140-160 BPM").get_tracks() == [1]


def test_with_db_the_collection_is_the_same_and_an_unwritable_file_is_named(tmp_path: Path, music: Path) -> None:
    database = tmp_path / "library.sqlite"
    tactus("scan", "--db", str(database), "--library-root", str(music))
    songs = library_songs("--db", str(database))
    assert len(songs) == len(SONGS)
    output = tmp_path / "collection.xml"
    printed = tactus("export", "--rekordbox", str(output), "--db", str(database)).stdout
    assert f"{len(SONGS)} of {len(SONGS)} songs, {len(SONGS)} with a beat grid" in printed
    check_collection(output, songs)
    unwritable = tmp_path / "no-such-folder" / "collection.xml"
    failed = tactus("export", "--rekordbox", str(unwritable), "--db", str(database), check=False)
    assert failed.returncode != 0
    assert str(unwritable) in failed.stderr and "cannot write" in failed.stderr and "its folder" in failed.stderr
    assert not unwritable.parent.exists()


def test_a_duration_beyond_any_integer_is_exported_as_unknown_not_a_crash(tmp_path: Path, music: Path) -> None:
    """A library whose song has a duration of 1e300 s (a worker's word, stored before its audio
    facts were checked) exports with TotalTime 0 for it: the conversion to an integer trapped."""
    database = tmp_path / "library.sqlite"
    tactus("scan", "--db", str(database), "--library-root", str(music))
    subprocess.run(["sqlite3", str(database), "UPDATE songs SET duration_s = 1e300 WHERE file_name = 'plain-150.wav'"], check=True)
    output = tmp_path / "collection.xml"
    exported = tactus("export", "--rekordbox", str(output), "--db", str(database), check=False)
    assert exported.returncode == 0, exported.stderr
    times = {track["Name"]: track["TotalTime"] for track in rbxml.RekordboxXml(str(output)).get_tracks()}
    assert times["Bell 150"] == 0 and all(time > 0 for name, time in times.items() if name != "Bell 150")
