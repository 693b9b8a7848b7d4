"""The Python client against a real `tactus serve` (see conftest.py)."""
from __future__ import annotations

import hashlib
import math
import threading
import time
from pathlib import Path

import pytest

import tactus
from tactus import Client, Rejected


def within(value: float, expected: float, tolerance: float = 0.04) -> bool:
    return abs(value - expected) <= tolerance * expected


def test_submit_a_folder_waits_with_progress_and_finds_the_tempi(server, songs: Path) -> None:
    calls = []
    with Client(server.frontend, events=server.events, timeout=10) as client:
        submitted = client.submit_files([songs], progress=lambda state: calls.append((state.submitted, state.finished)),
                                        timeout=240)
    assert sorted(Path(item.path).name for item in submitted) == ["click-100.wav", "click-120.wav", "click-150.wav"]
    assert all(item.done for item in submitted)
    # The progress callback heard of each submission and each finished song, and of the text file skipped.
    assert calls[-1] == (3, 3)
    assert len(calls) == 6
    for item in submitted:
        expected = float(Path(item.path).stem.split("-")[1])
        assert item.song == hashlib.sha256(Path(item.path).read_bytes()).hexdigest()
        assert item.consensus is not None and item.consensus["bpm"] is not None
        assert within(item.consensus["bpm"], expected) or within(item.consensus["bpm"], expected * 2) \
            or within(item.consensus["bpm"], expected / 2), (item.path, item.consensus)


def test_query_result_compare_and_playlist_answer_from_the_library(server, songs: Path) -> None:
    with Client(server.frontend, events=server.events, timeout=10) as client:
        client.submit_files([songs], timeout=240)
        every = client.query()
        assert len(every) == 3
        newest = client.query(order="newest")
        assert {match["song"] for match in newest} == {match["song"] for match in every}
        fast = [match for match in every if match["matched_bpm"] > 140]
        ranged = client.query(140, 160)
        assert [match["song"] for match in ranged] == [match["song"] for match in fast]
        song = ranged[0]["song"]
        result = client.result(song, windows=True)
        assert result["song"] == song and result["pending"] == []
        assert all(analysis["windows"] for analysis in result["analyses"])
        comparison = client.compare(song)["song"]
        assert comparison["file"] == "click-150.wav"
        # Every detector that analysed the song (beatnet is offered but runs only when named).
        offered = {d["detector"]["name"] for d in client.detectors()}
        analysed = {analysis["detector"] for analysis in result["analyses"]}
        assert analysed <= offered and "comb-filter" in analysed
        assert {row["detector"] for row in comparison["results"]} == analysed
        library = client.compare()["library"]
        assert library["songs"] == 3
        playlist = client.playlist(cadence=150, minutes=0.4)
        assert playlist["entries"] and playlist["entries"][0]["match"]["song"] == song


def test_the_server_sorts_every_match_before_paging_and_counts_them_all(server, songs: Path) -> None:
    with Client(server.frontend, events=server.events, timeout=10) as client:
        client.submit_files([songs], timeout=240)
        clicks = {match["song"]: match["file"] for match in client.query() if match["file"].startswith("click-")}
        assert len(clicks) == 3

        def files(**options) -> list:
            return [match["file"] for match in client.query(**options) if match["song"] in clicks]

        assert files(order="title") == ["click-100.wav", "click-120.wav", "click-150.wav"]
        assert files(order="title", descending=True) == ["click-150.wav", "click-120.wav", "click-100.wav"]
        # One song a page: the pages are slices of the whole sorted answer.
        pages = [files(order="duration", descending=True, limit=1, offset=n) for n in range(len(clicks))]
        assert [page for page in pages if page] == [[name] for name in files(order="duration", descending=True)]
        by_detector = client.query(detector="comb-filter", order="confidence", descending=True)
        assert all(0 <= match["confidence"] <= 1 for match in by_detector)
        confidences = [match["confidence"] for match in by_detector]
        assert confidences == sorted(confidences, reverse=True)
        everything = client.query()
        histogram = client.histogram(bin_width=10)
        assert histogram["total"] == len(everything) == sum(bin["count"] for bin in histogram["bins"])
        assert all(bin["width"] == 10 and bin["lower"] % 10 == 0 for bin in histogram["bins"])
        fast = client.histogram(140, 160, bin_width=5)
        assert fast["total"] == len(client.query(140, 160))
        with pytest.raises(Rejected) as refused:
            client.query(detector="comb-filter", order="agreement")
        assert refused.value.code == "bad-request" and "order" in refused.value.message
        with pytest.raises(Rejected) as refused:
            client.histogram(bin_width=0)
        assert refused.value.code == "bad-request" and "histogram" in refused.value.message


def test_errors_carry_the_protocol_code(server) -> None:
    with Client(server.frontend, timeout=5) as client:
        with pytest.raises(Rejected) as unknown:
            client.result("0" * 64)
        assert unknown.value.code == "not-found"
        with pytest.raises(Rejected) as bad:
            client.query(200, 100)
        assert bad.value.code == "bad-request" and "max_bpm" in bad.value.message


def test_no_server_is_a_no_answer_error_not_a_hang() -> None:
    with Client("tcp://127.0.0.1:9", timeout=0.3) as client:
        with pytest.raises(tactus.NoAnswer):
            client.status()


def test_events_iterate_as_songs_finish(server, tmp_path: Path) -> None:
    from conftest import click_track

    song = click_track(tmp_path / "click-132.wav", 132, seconds=20)
    received = []
    with Client(server.frontend, events=server.events, timeout=10) as client:
        stream = client.events()
        ready = threading.Event()

        def follow() -> None:
            ready.set()
            for event in stream:
                received.append(event)
                if event.name == "song.done":
                    return

        thread = threading.Thread(target=follow, daemon=True)
        thread.start()
        ready.wait()
        import time
        time.sleep(0.3)  # the subscription reaches the server before the song is sent
        answer = client.submit(song.read_bytes(), name=song.name)
        thread.join(timeout=240)
        stream.close()
    names = [event.name for event in received]
    assert "song.done" in names and names.count("job.done") + names.count("job.failed") >= 1
    assert all(event.body["song"] == answer["song"] for event in received if event.name.startswith(("job.", "song.")))


def test_query_frame_needs_pandas_or_says_so(server) -> None:
    with Client(server.frontend, timeout=5) as client:
        try:
            import pandas  # noqa: F401
        except ImportError:
            with pytest.raises(ImportError, match="pandas"):
                client.query_frame()
        else:
            frame = client.query_frame()
            assert list(frame.columns)[:3] == ["song", "bpm", "factor"]


def test_curve_keys_come_from_certificate_files(tmp_path: Path) -> None:
    import zmq.auth

    public_file, secret_file = zmq.auth.create_certificates(str(tmp_path), "alice")
    keys = tactus.CurveKeys.from_files(public_file, secret_file)
    assert len(keys.public) == 40 and len(keys.secret) == 40 and keys.server_public == keys.public
    with pytest.raises(ValueError, match="not a secret certificate"):
        tactus.CurveKeys.from_files(public_file, public_file)


def test_a_curve_server_answers_an_authorized_key_only(tmp_path: Path) -> None:
    import json
    import subprocess

    import zmq.auth
    from conftest import tactus_binary

    keys, authorized = tmp_path / "keys", tmp_path / "authorized"
    authorized.mkdir()
    binary = tactus_binary()
    subprocess.run([binary, "keys", "generate", "server", "--out", str(keys)], check=True, capture_output=True)
    alice_public, alice_secret = zmq.auth.create_certificates(str(keys), "alice")
    _, mallory_secret = zmq.auth.create_certificates(str(keys), "mallory")
    (authorized / "alice.key").write_text(Path(alice_public).read_text())
    process = subprocess.Popen(
        [binary, "serve", "--data", str(tmp_path / "data"), "--no-local-workers", "--no-web", "--json",
         "--frontend", "tcp://127.0.0.1:*", "--backend", "tcp://127.0.0.1:*", "--events", "tcp://127.0.0.1:*",
         "--curve-secret-key", str(keys / "server.key_secret"), "--authorized-clients", str(authorized),
         "--log-level", "error"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        endpoints = json.loads(process.stdout.readline())
        alice = tactus.CurveKeys.from_files(str(keys / "server.key"), alice_secret)
        with Client(endpoints["frontend"], curve=alice, timeout=5) as client:
            assert client.status()["server"]["accepting"] is True
        mallory = tactus.CurveKeys.from_files(str(keys / "server.key"), mallory_secret)
        # The server drops a refused handshake's connection, leaving the client's socket no peer
        # to send to: the request must give up after its timeout, not block in send.
        started = time.monotonic()
        with Client(endpoints["frontend"], curve=mallory, timeout=0.5) as client:
            with pytest.raises(tactus.NoAnswer):
                client.status()
        assert time.monotonic() - started < 5
    finally:
        process.terminate()
        process.wait(timeout=20)


def test_a_song_over_the_servers_inline_limit_is_uploaded_in_chunks(server, tmp_path: Path) -> None:
    from conftest import click_track

    # 44.1 kHz 16-bit mono: 30 s is about 2.6 MB, over the 1 MiB a server takes in one frame.
    song = click_track(tmp_path / "click-long.wav", 126, seconds=30, rate=44100)
    audio = song.read_bytes()
    assert len(audio) > tactus.client.INLINE_SONG_BYTES == 1 << 20
    with Client(server.frontend, timeout=30) as client:
        answer = client.submit(audio, name=song.name)
    assert answer["song"] == hashlib.sha256(audio).hexdigest()
    assert answer["jobs"]


def test_every_command_of_the_protocol_is_a_method_of_the_client() -> None:
    # The request schemas are the protocol's commands: the Swift suite checks them against the
    # table of commands the coordinator and the Swift client decode with.
    schemas = Path(tactus.__file__).parent / "schemas"
    commands = {path.name[len("request."):-len(".json")] for path in schemas.glob("request.*.json")}
    assert "submit" in commands and "tags" in commands
    # A command's hyphens are underscores in its method's name (truth-import: truth_import).
    missing = sorted(command for command in commands if not callable(getattr(Client, command.replace("-", "_"), None)))
    assert missing == [], f"commands the Python client has no method for: {missing}"


def test_resolve_truth_import_stretch_render_prune_tags_and_cadence_answer_through_their_methods(server, songs: Path) -> None:
    with Client(server.frontend, events=server.events, timeout=10) as client:
        client.submit_files([songs], timeout=240)
        song = client.query(140, 160)[0]["song"]
        resolved = client.resolve([song[:12], "click-150.wav", "no-such-song"])
        assert [entry.get("song") for entry in resolved[:2]] == [song, song]
        assert resolved[2]["problem"]["code"] == "not-found"
        assert client.truth_import([(song, 150.0)], source="csv:tempi.csv") == 1
        assert client.truth(song)["reference"]["source"] == "csv:tempi.csv"
        with pytest.raises(Rejected) as refusal:
            client.truth_import([(song, 151.0), ("f" * 64, 120.0)], source="csv:tempi.csv")
        assert refusal.value.code == "not-found"
        assert client.truth(song)["reference"]["bpm"] == 150.0
        # This server keeps no uploaded bytes (no --keep-uploads) and has no library root.
        with pytest.raises(Rejected) as refusal:
            client.stretch(song, 160)
        assert refusal.value.code == "not-found" and "--keep-uploads" in refusal.value.message
        with pytest.raises(Rejected) as refusal:
            client.render(f"{song[:16]}-160")
        assert refusal.value.code == "not-found"
        assert client.prune(dry_run=True)["dry_run"] is True
        files = client.tags("read", songs=[song])["files"]
        assert [(file["song"], file["outcome"]) for file in files] == [(song, "skipped")], files
        # A minute at 100 Hz, `t,x,y,z` in m/s^2: gravity and a bounce at 2.8 Hz.
        rows = ["t,x,y,z"] + [f"{i / 100:.2f},0,0,{9.8 + 4 * math.sin(2 * math.pi * 2.8 * i / 100):.3f}"
                              for i in range(100 * 60)]
        report = client.cadence("\n".join(rows).encode(), "walk.csv", timeout=30)
        assert report["file"] == "walk.csv" and report["samples"] == 6000, report
        assert abs(report["duration_s"] - 60) < 0.1 and report["windows"], report
        # Twenty minutes (over a frame) go as an upload, with the same answer for the same steps.
        rows = ["t,x,y,z"] + [f"{i / 100:.2f},0,0,{9.8 + 4 * math.sin(2 * math.pi * 2.8 * i / 100):.3f}"
                              for i in range(100 * 60 * 20)]
        long = "\n".join(rows).encode()
        assert len(long) > tactus.client.INLINE_SONG_BYTES
        report = client.cadence(long, "long.csv", timeout=60)
        assert report["file"] == "long.csv" and report["samples"] == 120000, report
