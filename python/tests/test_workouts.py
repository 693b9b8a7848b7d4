"""Watches' workouts through `tactus cadence`: GPX written by gpxpy (with Garmin's
TrackPointExtension), FIT written by fit-tool, TCX written here and read back by tcxreader first,
all with a known cadence (per foot, as watches store it), heart rate and speed; analysed by the
command here and by a server (`--server`, and the Python client, whose replies are checked
against the protocol's schema). `make deps` installs the writers in .build/python-tests."""
from __future__ import annotations

import datetime
import json
import math
import subprocess
from pathlib import Path
from typing import Dict, List, NamedTuple, Optional

import pytest

from conftest import tactus_binary

gpxpy = pytest.importorskip("gpxpy", reason="gpxpy is installed for the tests by `make deps` (.build/python-tests)")
pytest.importorskip("fit_tool", reason="fit-tool is installed for the tests by `make deps`")
tcxreader = pytest.importorskip("tcxreader.tcxreader", reason="tcxreader is installed for the tests by `make deps`")

from fit_tool.fit_file_builder import FitFileBuilder  # noqa: E402
from fit_tool.profile.messages.file_id_message import FileIdMessage  # noqa: E402
from fit_tool.profile.messages.record_message import RecordMessage  # noqa: E402
from fit_tool.profile.messages.session_message import SessionMessage  # noqa: E402
from fit_tool.profile.profile_type import FileType, Manufacturer, Sport  # noqa: E402

from tactus import Client  # noqa: E402

START = datetime.datetime(2024, 5, 1, 7, 30, tzinfo=datetime.timezone.utc)
EARTH_RADIUS = 6_371_008.8
TRACKPOINT_EXTENSION = "http://www.garmin.com/xmlschemas/TrackPointExtension/v1"


class Segment(NamedTuple):
    seconds: int
    strides: float  # per foot, per minute: what the watch stores
    heart_rate: int
    speed: float  # metres per second


# A run: warm-up, an interval, cool-down.
RUN = [Segment(120, 80, 130, 3.0), Segment(120, 90, 165, 4.0), Segment(120, 75, 120, 2.5)]
# A ride of the same heart rates, its cadence pedal revolutions per minute.
RIDE = [Segment(120, 85, 130, 7.0), Segment(120, 95, 165, 9.0), Segment(120, 80, 120, 6.0)]


def samples(run: List[Segment]):
    """(seconds from the start, segment, metres travelled) every second."""
    t, travelled = 0, 0.0
    for segment in run:
        for _ in range(segment.seconds):
            yield t, segment, travelled
            t += 1
            travelled += segment.speed


def write_gpx(path: Path, run: List[Segment], cadence: bool = True, sport: Optional[str] = None) -> Path:
    """A GPX track; `sport` is the track's type (gpxpy's track.type)."""
    import xml.etree.ElementTree as ElementTree

    gpx = gpxpy.gpx.GPX()
    gpx.nsmap["gpxtpx"] = TRACKPOINT_EXTENSION
    track = gpxpy.gpx.GPXTrack()
    track.type = sport
    gpx.tracks.append(track)
    segment_ = gpxpy.gpx.GPXTrackSegment()
    track.segments.append(segment_)
    for t, segment, travelled in samples(run):
        # Northwards along a meridian: the distance is the arc.
        point = gpxpy.gpx.GPXTrackPoint(latitude=45 + math.degrees(travelled / EARTH_RADIUS), longitude=7.0,
                                        time=START + datetime.timedelta(seconds=t))
        extension = ElementTree.Element(f"{{{TRACKPOINT_EXTENSION}}}TrackPointExtension")
        ElementTree.SubElement(extension, f"{{{TRACKPOINT_EXTENSION}}}hr").text = str(segment.heart_rate)
        if cadence:
            ElementTree.SubElement(extension, f"{{{TRACKPOINT_EXTENSION}}}cad").text = str(int(segment.strides))
        point.extensions.append(extension)
        segment_.points.append(point)
    path.write_text(gpx.to_xml())
    return path


def write_tcx(path: Path, run: List[Segment], sport: str = "Running") -> Path:
    """A Garmin TCX activity: a run's RunCadence in the ActivityExtension's TPX, as watches write
    it; another sport's (Biking) in the track point's Cadence."""
    points = []
    for t, segment, travelled in samples(run):
        time = (START + datetime.timedelta(seconds=t)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
        cadence = (f"<ns3:RunCadence>{int(segment.strides)}</ns3:RunCadence>" if sport == "Running" else "")
        other_cadence = "" if sport == "Running" else f"\n            <Cadence>{int(segment.strides)}</Cadence>"
        points.append(f"""          <Trackpoint>
            <Time>{time}</Time>
            <Position><LatitudeDegrees>45.0</LatitudeDegrees><LongitudeDegrees>7.0</LongitudeDegrees></Position>
            <DistanceMeters>{travelled:.1f}</DistanceMeters>
            <HeartRateBpm><Value>{segment.heart_rate}</Value></HeartRateBpm>{other_cadence}
            <Extensions><ns3:TPX><ns3:Speed>{segment.speed}</ns3:Speed>{cadence}</ns3:TPX></Extensions>
          </Trackpoint>""")
    total = sum(segment.seconds for segment in run)
    path.write_text(f"""<?xml version="1.0" encoding="UTF-8"?>
<TrainingCenterDatabase xmlns="http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2"
    xmlns:ns3="http://www.garmin.com/xmlschemas/ActivityExtension/v2">
  <Activities>
    <Activity Sport="{sport}">
      <Id>{START.strftime("%Y-%m-%dT%H:%M:%S.000Z")}</Id>
      <Lap StartTime="{START.strftime("%Y-%m-%dT%H:%M:%S.000Z")}">
        <TotalTimeSeconds>{total}</TotalTimeSeconds>
        <DistanceMeters>0</DistanceMeters>
        <Calories>0</Calories>
        <Intensity>Active</Intensity>
        <TriggerMethod>Manual</TriggerMethod>
        <Track>
{chr(10).join(points)}
        </Track>
      </Lap>
    </Activity>
  </Activities>
</TrainingCenterDatabase>
""")
    return path


def write_fit(path: Path, run: List[Segment], file_type: "FileType" = FileType.ACTIVITY,
              sport: "Optional[Sport]" = None) -> Path:
    """A FIT activity: record messages with cadence, fractional cadence, heart rate, distance and
    speed; then a session message of `sport`, when given."""
    builder = FitFileBuilder(auto_define=True, min_string_size=50)
    start_ms = int(START.timestamp() * 1000)
    file_id = FileIdMessage()
    file_id.type = file_type
    file_id.manufacturer = Manufacturer.DEVELOPMENT.value
    file_id.product = 0
    file_id.time_created = start_ms
    file_id.serial_number = 0x12345678
    builder.add(file_id)
    records = []
    for t, segment, travelled in samples(run):
        record = RecordMessage()
        record.timestamp = start_ms + t * 1000
        record.heart_rate = segment.heart_rate
        record.cadence = int(segment.strides)
        record.fractional_cadence = segment.strides - int(segment.strides)
        record.distance = travelled
        record.speed = segment.speed
        records.append(record)
    builder.add_all(records)
    if sport is not None:
        session = SessionMessage()
        session.timestamp = start_ms + sum(segment.seconds for segment in run) * 1000
        session.start_time = start_ms
        session.sport = sport
        builder.add(session)
    builder.build().to_file(str(path))
    return path


def with_fit_crc(data: bytearray) -> bytes:
    """`data` (a FIT file) with its last two bytes set to the CRC of the others (the FIT SDK's algorithm)."""
    table = [0x0000, 0xCC01, 0xD801, 0x1400, 0xF001, 0x3C00, 0x2800, 0xE401,
             0xA001, 0x6C00, 0x7800, 0xB401, 0x5000, 0x9C01, 0x8801, 0x4400]
    crc = 0
    for byte in data[:-2]:
        for nibble in (byte & 0xF, byte >> 4):
            tmp = table[crc & 0xF]
            crc = (crc >> 4) & 0x0FFF
            crc = crc ^ tmp ^ table[nibble]
    data[-2:] = crc.to_bytes(2, "little")
    return bytes(data)


def cadence_json(*arguments: str) -> "tuple[int, List[Dict]]":
    finished = subprocess.run([tactus_binary(), "cadence", "--json", *arguments], capture_output=True, text=True,
                              timeout=120)
    return finished.returncode, [json.loads(line) for line in finished.stdout.splitlines() if line]


def check_report(report: Dict, run: List[Segment], format: str, with_pace: bool = True) -> None:
    """Every window inside a segment has its steps per minute (twice the strides stored), heart
    rate and pace; the file held strides; the overall heart rate is the mean of the samples'."""
    assert report["format"] == format, report
    assert report["cadence_held"] == "strides-per-minute", report
    assert "unit" not in report and "includes_gravity" not in report
    total = sum(segment.seconds for segment in run)
    assert report["duration_s"] == pytest.approx(total - 1)
    assert report["samples"] == total
    assert report["heart_rate_bpm"] == pytest.approx(sum(s.heart_rate * s.seconds for s in run) / total, abs=0.01)
    checked = 0
    begin = 0
    for segment in run:
        for window in report["windows"]:
            if begin <= window["start_s"] and window["end_s"] <= begin + segment.seconds:
                checked += 1
                assert window["status"] == "steps", window
                assert window["cadence_spm"] == pytest.approx(2 * segment.strides, abs=0.01), window
                assert window["confidence"] == pytest.approx(1.0), window
                assert window["heart_rate_bpm"] == pytest.approx(segment.heart_rate), window
                if with_pace:
                    assert window["pace_s_per_km"] == pytest.approx(1000 / segment.speed, rel=0.01), window
        begin += segment.seconds
    assert checked >= 3 * 50, checked
    steps = [window["cadence_spm"] for window in report["windows"] if window["status"] == "steps"]
    assert report["cadence_spm"] == pytest.approx(sum(steps) / len(steps))


def test_a_gpx_written_by_gpxpy_gives_steps_per_minute_heart_rate_and_pace(tmp_path: Path) -> None:
    path = write_gpx(tmp_path / "run.gpx", RUN)
    # gpxpy reads back what it wrote: the extension is there.
    points = gpxpy.parse(path.read_text()).tracks[0].segments[0].points
    assert len(points) == 360 and points[0].extensions
    status, reports = cadence_json(str(path))
    assert status == 0, reports
    check_report(reports[0], RUN, "gpx")


def test_a_tcx_read_back_by_tcxreader_gives_the_same(tmp_path: Path) -> None:
    path = write_tcx(tmp_path / "run.tcx", RUN)
    exercise = tcxreader.TCXReader().read(str(path), only_gps=False)
    assert [point.hr_value for point in exercise.trackpoints][::120] == [130, 165, 120]
    assert [int(point.tpx_ext["RunCadence"]) for point in exercise.trackpoints][::120] == [80, 90, 75]
    status, reports = cadence_json(str(path))
    assert status == 0, reports
    check_report(reports[0], RUN, "tcx")


def test_a_fit_activity_written_by_fit_tool_with_fractional_cadence(tmp_path: Path) -> None:
    run = [segment._replace(strides=segment.strides + 0.5) for segment in RUN]
    path = write_fit(tmp_path / "run.fit", run)
    status, reports = cadence_json(str(path))
    assert status == 0, reports
    check_report(reports[0], run, "fit")


def test_a_server_reads_workouts_in_its_service_host_and_answers_the_same(tmp_path: Path, server) -> None:
    files = [write_gpx(tmp_path / "run.gpx", RUN), write_tcx(tmp_path / "run.tcx", RUN), write_fit(tmp_path / "run.fit", RUN)]
    status, here = cadence_json(*map(str, files))
    assert status == 0
    status, there = cadence_json("--server", server.frontend, *map(str, files))
    assert status == 0 and there == here
    with Client(server.frontend, timeout=30) as client:  # the reply checked against reply.cadence.json
        report = client.cadence(files[2].read_bytes(), "run.fit")
    check_report(report, RUN, "fit")


@pytest.mark.parametrize("remote", [False, True], ids=["here", "server"])
def test_a_rides_cadence_is_pedal_revolutions_never_steps(tmp_path: Path, server, remote: bool) -> None:
    """A cycling FIT (fit-tool's session message), a Biking TCX (read back by tcxreader) and a
    cycling GPX (gpxpy's track type): the sport is reported and the cadence held as revolutions
    per minute, never doubled into steps (it was read as a run at 170-190 steps a minute)."""
    fit = write_fit(tmp_path / "ride.fit", RIDE, sport=Sport.CYCLING)
    tcx = write_tcx(tmp_path / "ride.tcx", RIDE, sport="Biking")
    assert tcxreader.TCXReader().read(str(tcx), only_gps=False).activity_type == "Biking"
    gpx = write_gpx(tmp_path / "ride.gpx", RIDE, sport="cycling")
    assert gpxpy.parse(gpx.read_text()).tracks[0].type == "cycling"
    arguments = ["--server", server.frontend] if remote else []
    status, reports = cadence_json(*arguments, str(fit), str(tcx), str(gpx))
    assert status == 0, reports
    for report, sport in zip(reports, ["cycling", "biking", "cycling"]):
        assert report["sport"] == sport and report["cadence_held"] == "revolutions-per-minute", report
        assert report["cadence_spm"] is None and report["step_s"] == 0, report
        total = sum(segment.seconds for segment in RIDE)
        assert report["held_cadence"] == pytest.approx(sum(s.strides * s.seconds for s in RIDE) / total, abs=1), report
        begin = 0
        for segment in RIDE:
            inside = [window for window in report["windows"]
                      if begin <= window["start_s"] and window["end_s"] <= begin + segment.seconds]
            assert len(inside) >= 50
            for window in inside:
                assert window["status"] == "irregular" and window["cadence_spm"] is None, window
                assert window["held_cadence"] == pytest.approx(segment.strides), window
                assert window["heart_rate_bpm"] == pytest.approx(segment.heart_rate), window
            begin += segment.seconds
    # A run's file names its sport too, and keeps its steps.
    status, reports = cadence_json(*arguments, str(write_fit(tmp_path / "run.fit", RUN, sport=Sport.RUNNING)))
    assert status == 0 and reports[0]["sport"] == "running" and reports[0]["cadence_held"] == "strides-per-minute"
    assert "held_cadence" not in reports[0]


def test_the_text_report_of_a_ride_says_what_its_cadence_counts(tmp_path: Path) -> None:
    ride = write_fit(tmp_path / "ride.fit", RIDE, sport=Sport.CYCLING)
    finished = subprocess.run([tactus_binary(), "cadence", str(ride)], capture_output=True, text=True, timeout=120)
    assert finished.returncode == 0, finished.stderr
    assert ", cycling, cadence held in revolutions-per-minute, heart rate " in finished.stdout, finished.stdout
    _, reports = cadence_json(str(ride))
    assert ("  cadence none in steps: a cycling workout: its cadence counts pedal revolutions "
            f"(revolutions-per-minute), not steps; {reports[0]['held_cadence']:.1f} per minute while moving") in finished.stdout, \
        finished.stdout


@pytest.mark.parametrize("remote", [False, True], ids=["here", "server"])
def test_bad_workouts_get_an_error_naming_the_file_and_the_problem(tmp_path: Path, server, remote: bool) -> None:
    no_cadence = write_gpx(tmp_path / "no-cadence.gpx", RUN, cadence=False)
    course = write_fit(tmp_path / "course.fit", RUN, file_type=FileType.COURSE)
    damaged = tmp_path / "damaged.fit"
    data = bytearray(write_fit(tmp_path / "good.fit", RUN).read_bytes())
    data[len(data) // 2] ^= 0xFF
    damaged.write_bytes(bytes(data))
    broken = tmp_path / "broken.tcx"
    broken.write_text(write_tcx(tmp_path / "whole.tcx", RUN).read_text()[:5000])
    entities = tmp_path / "entities.gpx"
    entities.write_text('<?xml version="1.0"?><!DOCTYPE gpx [<!ENTITY a "aaaaaaaaaa">]><gpx>&a;</gpx>')
    expected = {
        no_cadence: ("no-cadence", "no cadence: the GPX file's samples have no gpxtpx:cad"),
        course: ("not-an-activity", "a FIT file of type 'course' (6), not an activity"),
        damaged: ("malformed-workout", "not a readable FIT workout: the file's CRC does not match"),
        broken: ("malformed-workout", "not a readable TCX workout: line"),
        entities: ("malformed-workout", "a document type declaration"),
    }
    arguments = ["--server", server.frontend] if remote else []
    status, reports = cadence_json(*arguments, *map(str, expected))
    assert status == 1
    for report, (path, (code, message)) in zip(reports, expected.items()):
        assert report["file"] == str(path)
        # A server answers every problem of a recording bad-recording, naming it in the message.
        assert report["error"]["code"] == ("bad-recording" if remote else code), report
        assert report["error"]["message"].startswith(f"{path}: "), report
        assert message in report["error"]["message"], report


def playlist(*arguments: str) -> subprocess.CompletedProcess:  # type: ignore[type-arg]
    return subprocess.run([tactus_binary(), "playlist", "--strict", "--json", *arguments], capture_output=True,
                          text=True, timeout=300)


def chosen(run: subprocess.CompletedProcess) -> List[str]:  # type: ignore[type-arg]
    """Each song chosen (its file) and the tempo of the segment it serves."""
    assert run.returncode == 0, run.stderr
    return [f"{Path(entry['file'] or '?').name} for {round(entry['cadence'])}"
            for entry in map(json.loads, run.stdout.splitlines())]


@pytest.fixture(scope="module")
def click_library(tmp_path_factory: pytest.TempPathFactory) -> "tuple[Path, Path]":
    """Click tracks at 120, 135, 150, 160 and 180 BPM, and a library file of them made by `tactus analyze --db`."""
    from conftest import click_track

    folder = tmp_path_factory.mktemp("workout-songs")
    for bpm in (120, 135, 150, 160, 180):
        click_track(folder / f"click-{bpm}.wav", bpm, seconds=40)
    library = folder / "library.sqlite"
    analysed = subprocess.run([tactus_binary(), "analyze", str(folder), "--db", str(library)], capture_output=True,
                              text=True, timeout=600)
    assert analysed.returncode == 0, analysed.stderr
    return folder, library


@pytest.mark.parametrize("writer", [write_gpx, write_tcx, write_fit], ids=["gpx", "tcx", "fit"])
def test_playlist_follow_a_workout_plays_its_cadence_profile(tmp_path: Path, click_library, writer) -> None:
    """Warm-up at 160 steps/min, an interval at 180, cool-down at 150: a song for each."""
    _, library = click_library
    workout = writer(tmp_path / f"run.{writer.__name__[6:]}", RUN)
    run = playlist("--db", str(library), "--follow", str(workout))
    assert chosen(run) == ["click-160.wav for 160", "click-180.wav for 180", "click-150.wav for 150"]
    assert f"cadence of {workout}: " in run.stderr


def test_playlist_by_heart_rate_plays_the_tempo_of_each_zone(tmp_path: Path, click_library) -> None:
    """Heart rates 130, 165, 120 of a 190 maximum: zones 2, 4, 2 (60-70 % and 80-90 %), 123 and 129 BPM by default."""
    _, library = click_library
    workout = write_fit(tmp_path / "run.fit", RUN)
    run = playlist("--db", str(library), "--follow", str(workout), "--by", "heart-rate", "--max-heart-rate", "190",
                   "--tolerance", "6")  # click-135 is analysed at 135.4, 5 % above 129
    # The cool-down is in the warm-up's zone: its song is played already (--strict: none other fits).
    assert chosen(run) == ["click-120.wav for 123", "click-135.wav for 129"]
    # Each stretch's tempo is the mean of its windows, some of which straddle a change of zone.
    assert f"tempo by heart rate of {workout}: 2:02 at 123.1, 2:00 at 128.9, 1:57 at 123.0" in run.stderr, run.stderr
    # The zones' tempi can be given; heart rates 130, 165, 120 of 175 are in zones 3, 5 and 2.
    run = playlist("--db", str(library), "--follow", str(workout), "--by", "heart-rate", "--max-heart-rate", "175",
                   "--zone-tempi", "100,120,135,160,180")
    assert chosen(run) == ["click-135.wav for 135", "click-180.wav for 180", "click-120.wav for 120"]
    # Without a maximum, the workout's highest heart rate is the maximum: 165 is zone 5, 130 (79 %) and
    # 120 (73 %) zone 3, whose one song is played in the warm-up.
    run = playlist("--db", str(library), "--follow", str(workout), "--by", "heart-rate", "--zone-tempi", "100,120,150,160,180")
    assert chosen(run) == ["click-150.wav for 150", "click-180.wav for 180"]
    # A workout without heart rate, and --by heart-rate without a workout, are refused saying why.
    no_heart_rate = tmp_path / "no-hr.tcx"
    no_heart_rate.write_text(write_tcx(tmp_path / "with-hr.tcx", RUN).read_text().replace("<HeartRateBpm><Value>", "<!--").replace("</Value></HeartRateBpm>", "-->"))
    refused = playlist("--db", str(library), "--follow", str(no_heart_rate), "--by", "heart-rate")
    assert refused.returncode != 0 and f"{no_heart_rate}: no heart rate: the TCX file's samples have none" in refused.stderr
    usage = playlist("--db", str(library), "--cadence", "170", "--by", "heart-rate")
    assert usage.returncode == 2 and "--by heart-rate follows a workout" in usage.stderr


def test_playlist_follow_a_ride_by_cadence_is_refused_and_by_heart_rate_plays(tmp_path: Path, click_library) -> None:
    _, library = click_library
    for ride in (write_fit(tmp_path / "ride.fit", RIDE, sport=Sport.CYCLING), write_tcx(tmp_path / "ride.tcx", RIDE, sport="Biking")):
        refused = playlist("--db", str(library), "--follow", str(ride))
        sport = "cycling" if ride.suffix == ".fit" else "biking"
        assert refused.returncode == 1 and refused.stdout == "", refused
        assert (f"{ride}: a {sport} workout: its cadence counts pedal revolutions (revolutions-per-minute), not steps; "
                "follow its heart rate instead (--by heart-rate)") in refused.stderr, refused.stderr
        run = playlist("--db", str(library), "--follow", str(ride), "--by", "heart-rate", "--max-heart-rate", "175",
                       "--zone-tempi", "100,120,135,160,180")
        assert chosen(run) == ["click-135.wav for 135", "click-180.wav for 180", "click-120.wav for 120"]


def test_playlist_follow_over_a_server(tmp_path: Path, click_library) -> None:
    from conftest import running_server

    folder, _ = click_library
    workout = write_gpx(tmp_path / "run.gpx", RUN)
    with running_server(tmp_path / "data") as server:
        with Client(server.frontend, events=server.events, timeout=10) as client:
            client.submit_files([folder], timeout=300)
        run = playlist("--server", server.frontend, "--follow", str(workout))
    assert chosen(run) == ["click-160.wav for 160", "click-180.wav for 180", "click-150.wav for 150"]


def test_every_cut_and_every_damaged_byte_of_a_fit_file_is_an_error_never_a_crash(tmp_path: Path) -> None:
    """The FIT decoder is bounded: a file cut anywhere, or with any byte changed, is an error
    naming the file (or, where the change keeps the CRC and the records whole, a report)."""
    whole = write_fit(tmp_path / "run.fit", RUN[:1]).read_bytes()
    variants = [("whole", whole)]
    for length in range(0, len(whole), max(1, len(whole) // 150)):
        variants.append(("cut", whole[:length]))
    for position in range(0, len(whole), max(1, len(whole) // 150)):
        damaged = bytearray(whole)
        damaged[position] ^= 0x5A
        variants.append(("flip", bytes(damaged)))
    # Each definition's field count made 255, and each data message's local type one never defined,
    # with the CRC made right again: only the decoder's own bounds stop these.
    header_size = whole[0]
    for position in range(header_size, len(whole) - 2):
        if whole[position] & 0xF0 == 0x40 and position + 5 < len(whole) - 2:  # a definition message's header
            crafted = bytearray(whole)
            crafted[position + 5] = 255
            variants.append(("fields", with_fit_crc(crafted)))
            crafted = bytearray(whole)
            crafted[position] = 0x4F  # a definition of local type 15 in its place, data messages left without theirs
            variants.append(("local", with_fit_crc(crafted)))
    files = []
    for index, (kind, data) in enumerate(variants):
        path = tmp_path / f"{kind}-{index}.fit"
        path.write_bytes(data)
        files.append(path)
    assert {kind for kind, _ in variants} == {"whole", "cut", "flip", "fields", "local"}
    status, reports = cadence_json(*map(str, files))
    assert status == 1
    assert [report["file"] for report in reports] == [str(path) for path in files]
    assert reports[0]["cadence_held"] == "strides-per-minute" and reports[0]["cadence_spm"] == pytest.approx(160)
    for (kind, _), report in list(zip(variants, reports))[1:]:
        # A cut or a changed byte breaks the CRC (or the header): always an error; a crafted file
        # whose CRC is right may decode into something, but never crashes the decoder.
        assert "error" in report or (kind in ("fields", "local") and report["format"] == "fit"), (kind, report)
        if "error" in report:
            assert report["error"]["message"].startswith(report["file"] + ": "), report
            if kind in ("cut", "flip"):
                assert report["error"]["code"] in ("malformed-workout", "not-a-recording"), report


def test_playlist_follow_a_workout_renders_each_song_at_its_segment_tempo(tmp_path: Path, click_library) -> None:
    """--render as for a profile: the songs found under --music, stretched, joined into one WAV
    file (read back with the standard library's wave)."""
    import wave

    folder, library = click_library
    workout = write_tcx(tmp_path / "run.tcx", RUN)
    output = tmp_path / "run.wav"
    run = subprocess.run([tactus_binary(), "playlist", "--db", str(library), "--follow", str(workout), "--render",
                          str(output), "--music", str(folder), "--crossfade-by-time", "--max-stretch", "3"],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    assert f"rendered {output}: 3 songs" in run.stdout + run.stderr
    with wave.open(str(output)) as rendered:
        seconds = rendered.getnframes() / rendered.getframerate()
    # Three 40 s songs at 160, 180 and 150 BPM, each stretched to its segment's cadence (160.1,
    # 179.9, 150.0: barely changed; within 3 %, each song in its own segment), less two 2 s crossfades.
    assert seconds == pytest.approx(116, abs=1), seconds


def test_the_web_gateway_builds_the_playlist_of_a_posted_workout(tmp_path: Path, click_library) -> None:
    """POST /api/v1/playlist with a workout as the body: the server reads it (its service host),
    the gateway asks for the playlist of the profile it cuts it into; what the playlist page's
    form sends."""
    import sys

    from conftest import ROOT

    sys.path.insert(0, str(ROOT / "Tests" / "Web"))
    from webserver import WebServer, request  # type: ignore[import-not-found]

    folder, _ = click_library
    web = WebServer()
    try:
        for song in sorted(folder.glob("*.wav")):
            web.wait(web.upload(song)["song"])
        fit = write_fit(tmp_path / "run.fit", RUN).read_bytes()

        def post(query: str, body: bytes) -> "tuple[int, Dict]":
            status, _, reply = request(web.url + "/api/v1/playlist?" + query, data=body,
                                       headers={"Content-Type": "application/octet-stream"})
            return status, json.loads(reply)

        def songs(reply: Dict) -> List[str]:
            """The songs that fit their segment (the others fill the segments' time)."""
            return [f"{entry['match']['file']} for {round(entry['cadence'])}" for entry in reply["playlist"]["entries"]
                    if entry["fits"]]

        status, reply = post("name=run.fit&tolerance=0.02", fit)
        assert status == 200, reply
        assert songs(reply) == ["click-160.wav for 160", "click-180.wav for 180", "click-150.wav for 150"]
        assert [round(fill["segment"]["cadence"]) for fill in reply["playlist"]["fills"]] == [160, 180, 150]
        status, reply = post("name=run.fit&by=heart-rate&max_heart_rate=175&tolerance=0.02", fit)
        assert status == 200, reply
        assert [round(fill["segment"]["cadence"]) for fill in reply["playlist"]["fills"]] == [126, 131, 123]
        # A ride's cadence is pedal revolutions: refused by cadence, followed by heart rate.
        ride = write_fit(tmp_path / "ride.fit", RIDE, sport=Sport.CYCLING).read_bytes()
        status, reply = post("name=ride.fit", ride)
        assert status == 422 and reply["code"] == "bad-recording", reply
        assert reply["message"] == ("ride.fit: a cycling workout: its cadence counts pedal revolutions "
                                    "(revolutions-per-minute), not steps; follow its heart rate instead (by=heart-rate)"), reply
        status, reply = post("name=ride.fit&by=heart-rate&max_heart_rate=175&tolerance=0.02", ride)
        assert status == 200, reply
        assert [round(fill["segment"]["cadence"]) for fill in reply["playlist"]["fills"]] == [126, 131, 123]

        # Bad input: an error naming the file and the problem.
        no_cadence = write_gpx(tmp_path / "no-cadence.gpx", RUN, cadence=False).read_bytes()
        status, reply = post("name=no-cadence.gpx", no_cadence)
        assert status == 422 and reply["code"] == "bad-recording", reply
        assert reply["message"].startswith("no-cadence.gpx: no cadence: the GPX file's samples have no gpxtpx:cad"), reply
        status, reply = post("name=run.fit&by=pace", fit)
        assert status == 400 and "by: 'pace' is not cadence or heart-rate" in reply["message"], reply
        status, reply = post("name=empty.fit", b"")
        assert status == 422 and reply["code"] == "empty", reply
        # The page offers the form that sends it.
        status, _, page = web.get("/playlist")
        assert status == 200 and b'id="follow"' in page and b'fetch("/api/v1/playlist?"' in page
    finally:
        web.stop()
