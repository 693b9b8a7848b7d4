import Foundation
import TactusCadence
import TactusModel
import TactusTestSupport
import Testing

/// The workout readers (FIT, GPX, TCX) on files written here as their formats document them
/// (``FITFileWriter`` byte by byte, GPX and TCX as watches write them): cadence, heart rate,
/// strides and steps, the sport, and bad input, each refused with a typed error naming the file.
@Suite struct WorkoutReaderTests {
    /// A run: two minutes at 85.5 strides a minute (171 steps), heart rate 150, 3 m/s.
    static let run = WorkoutSecond.steady(120, cadence: 85.5, heartRate: 150, speed: 3)
    /// A ride: two minutes at 90 pedal revolutions a minute, heart rate 140, 8 m/s.
    static let ride = WorkoutSecond.steady(120, cadence: 90, heartRate: 140, speed: 8)

    static func report(_ bytes: [UInt8], _ file: String) throws(CadenceError) -> CadenceReport {
        try CadenceAnalyzer().analyze(bytes, file: file)
    }

    static func report(_ text: String, _ file: String) throws(CadenceError) -> CadenceReport {
        try report(Array(text.utf8), file)
    }

    static func problem(_ bytes: [UInt8], _ file: String) -> CadenceError? {
        do {
            _ = try report(bytes, file)
            return nil
        } catch {
            return error
        }
    }

    static func problem(_ text: String, _ file: String) -> CadenceError? { problem(Array(text.utf8), file) }

    /// Every window of `report` has `steps` at `cadence`, with the heart rate and pace given.
    static func expectSteady(_ report: CadenceReport, cadence: Double, heartRate: Double, pace: Double?, _ name: String) {
        #expect(report.windows.count == 55, "\(name)")
        for window in report.windows {
            #expect(window.status == .steps && abs((window.cadence ?? 0) - cadence) < 0.01, "\(name): \(window)")
            #expect(window.confidence == 1 && window.heartRate == heartRate, "\(name): \(window)")
            if let pace { #expect(abs((window.pace ?? 0) - pace) < 0.5, "\(name): \(window)") }
        }
        #expect(abs((report.cadence ?? 0) - cadence) < 0.01 && report.heartRate == heartRate, "\(name)")
        #expect(report.heldCadence == nil && report.cadenceIsNotSteps == nil, "\(name)")
    }

    @Test func aFITRunsStridesAreReportedAsStepsWithHeartRateAndPace() throws {
        for bigEndian in [false, true] {
            let report = try Self.report(WorkoutFiles.fit(Self.run, sports: [FITFileWriter.Profile.running], bigEndian: bigEndian), "run.fit")
            #expect(report.format == .fit && report.sport == "running" && report.cadenceHeld == .strides)
            #expect(report.samples == 120 && report.duration == 119)
            // 85.5 strides (the fractional cadence's 64/128) are 171 steps; 3 m/s is 333 s/km.
            Self.expectSteady(report, cadence: 171, heartRate: 150, pace: 1000 / 3, "big endian: \(bigEndian)")
        }
    }

    @Test func aCadenceOfStepsIsKeptAndAFileWithoutSportIsReadByItsSize() throws {
        let steps = WorkoutSecond.steady(120, cadence: 172, heartRate: 160, speed: 3.5)
        let report = try Self.report(WorkoutFiles.fit(steps), "steps.fit")
        #expect(report.sport == nil && report.cadenceHeld == .steps)
        Self.expectSteady(report, cadence: 172, heartRate: 160, pace: 1000 / 3.5, "steps")
        let strides = try Self.report(WorkoutFiles.fit(Self.run), "strides.fit")
        #expect(strides.sport == nil && strides.cadenceHeld == .strides && abs((strides.cadence ?? 0) - 171) < 0.01)
    }

    /// A day-long workout's report keeps to 14,400 windows, its hop a whole multiple of 2 s, so
    /// that it fits in a server's reply (a 20-hour run's 36,000 windows took 4.9 MB, over the 4
    /// MiB a reply carries: attack round 8, M4); its cadence and stepping time are the same.
    @Test func aLongWorkoutsWindowsAreThinnedToFitAReply() throws {
        let hours = WorkoutSecond.steady(72_000, cadence: 85.5, heartRate: 150, speed: 3)
        let report = try Self.report(WorkoutFiles.fit(hours), "twenty-hours.fit")
        #expect(report.windows.count <= CadenceAnalyzer.Settings().maximumWindows && report.windows.count > 10_000, "\(report.windows.count)")
        let hops = Set(zip(report.windows.dropFirst(), report.windows).map { $0.start - $1.start })
        #expect(hops == [6], "\(hops)")
        #expect(abs((report.cadence ?? 0) - 171) < 0.01)
        #expect(abs(report.stepSeconds - report.duration) < 30, "\(report.stepSeconds) of \(report.duration)")
        #expect(try JSONEncoder().encode(report).count < 4 << 20)
        let short = try Self.report(WorkoutFiles.fit(Self.run), "run.fit")
        #expect(Set(zip(short.windows.dropFirst(), short.windows).map { $0.start - $1.start }) == [2])
    }

    @Test func gpxAndTCXRunsGiveTheSame() throws {
        let gpx = try Self.report(WorkoutFiles.gpx(Self.run, type: "running"), "run.gpx")
        #expect(gpx.format == .gpx && gpx.sport == "running" && gpx.cadenceHeld == .strides)
        // GPX and TCX hold whole strides: 85.
        Self.expectSteady(gpx, cadence: 170, heartRate: 150, pace: 1000 / 3, "gpx")
        let tcx = try Self.report(WorkoutFiles.tcx(Self.run), "run.tcx")
        #expect(tcx.format == .tcx && tcx.sport == "running" && tcx.cadenceHeld == .strides)
        Self.expectSteady(tcx, cadence: 170, heartRate: 150, pace: 1000 / 3, "tcx")
        let untyped = try Self.report(WorkoutFiles.gpx(Self.run), "untyped.gpx")
        #expect(untyped.sport == nil && untyped.cadenceHeld == .strides)
    }

    /// A bike's cadence is pedal revolutions: never doubled, never steps (it was read as a run
    /// at 180 steps a minute); the heart rate still is.
    @Test func aRidesCadenceIsRevolutionsNotSteps() throws {
        let files: [(String, [UInt8], String)] = [
            ("ride.fit", WorkoutFiles.fit(Self.ride, sports: [FITFileWriter.Profile.cycling]), "cycling"),
            ("ride.tcx", Array(WorkoutFiles.tcx(Self.ride, sport: "Biking").utf8), "biking"),
            ("ride.gpx", Array(WorkoutFiles.gpx(Self.ride, type: "Road Cycling").utf8), "road_cycling"),
        ]
        for (name, bytes, sport) in files {
            let report = try Self.report(bytes, name)
            #expect(report.sport == sport && report.cadenceHeld == .revolutions, "\(name)")
            #expect(report.cadence == nil && report.stepSeconds == 0 && report.heldCadence == 90, "\(name)")
            #expect(report.heartRate == 140, "\(name)")
            for window in report.windows {
                #expect(window.status == .irregular && window.cadence == nil && window.heldCadence == 90, "\(name): \(window)")
                #expect(window.heartRate == 140 && abs((window.pace ?? 0) - 125) < 0.5, "\(name): \(window)")
            }
            #expect(report.cadenceIsNotSteps == "a \(sport) workout: its cadence counts pedal revolutions (revolutions-per-minute), not steps")
            // What --by heart-rate follows is there.
            #expect(HeartRateZones(maximumHeartRate: 190).tempoReport(report)?.windows.allSatisfy { $0.cadence != nil } == true)
        }
        // Sessions of different sports (a triathlon): no steps either.
        let multisport = try Self.report(
            WorkoutFiles.fit(Self.ride, sports: [FITFileWriter.Profile.running, FITFileWriter.Profile.cycling]), "tri.fit")
        #expect(multisport.sport == "multisport" && multisport.cadenceHeld == .other && multisport.cadence == nil)
        let rowing = try Self.report(WorkoutFiles.fit(WorkoutSecond.steady(120, cadence: 18, heartRate: 130, speed: 4), sports: [15]), "row.fit")
        #expect(rowing.sport == "rowing" && rowing.cadenceHeld == .strokes && rowing.heldCadence == 18)
    }

    @Test func badFITFilesGetATypedErrorNamingTheFileAndTheProblem() throws {
        let whole = WorkoutFiles.fit(Self.run, sports: [FITFileWriter.Profile.running])
        // Cut anywhere: the header, the announced size or the CRC gives it away.
        for length in stride(from: 0, to: whole.count, by: 7) {
            let error = try #require(Self.problem(Array(whole.prefix(length)), "cut.fit"), "\(length)")
            #expect(error.file == "cut.fit" && error.description.hasPrefix("cut.fit: "), "\(length): \(error)")
            #expect(["malformed-workout", "not-a-recording"].contains(error.code.rawValue), "\(length): \(error)")
        }
        var damaged = whole
        damaged[200] ^= 0x10
        #expect(Self.problem(damaged, "damaged.fit")?.problem
            == .malformedWorkout(format: .fit, reason: "the file's CRC does not match its bytes (a damaged file?)"))
        var wrongCRC = whole
        wrongCRC[wrongCRC.count - 1] ^= 0xFF
        #expect(Self.problem(wrongCRC, "crc.fit")?.code.rawValue == "malformed-workout")

        let course = WorkoutFiles.fit(Self.run, fileType: FITFileWriter.Profile.course)
        let notActivity = try #require(Self.problem(course, "course.fit"))
        #expect(notActivity.problem == .notAnActivity(fileType: "'course' (6)"))
        #expect(notActivity.description.hasPrefix("course.fit: a FIT file of type 'course' (6), not an activity"))

        // A data message before its definition, with the CRC made right.
        var writer = FITFileWriter()
        writer.define(local: 0, global: FITFileWriter.Profile.fileID, fields: [(0, .enumeration)])
        writer.data(local: 0, [4])
        var undefined = writer.bytes
        undefined.insert(0x05, at: 14 + writer.records.count)
        undefined.removeLast(2)
        undefined[4] += 1
        let crc = FITFileWriter.crc(undefined)
        undefined += [UInt8(crc & 0xFF), UInt8(crc >> 8)]
        #expect(Self.problem(undefined, "undefined.fit")?.problem == .malformedWorkout(
            format: .fit, reason: "a data message of local type 5 at byte 25 before its definition"))
    }

    /// Numbers no watch records: each is refused naming the sample or the line (a heart rate
    /// of 1e300 made the mean heart rate infinite, a longitude of NaN a jump of half the Earth).
    @Test func implausibleNumbersAreRefusedNamingTheSample() throws {
        // The first track point is on line 4.
        let gpx = WorkoutFiles.gpx(WorkoutSecond.steady(30, cadence: 85, heartRate: 150, speed: 3))
        let hostile: [(String, String, String)] = [
            ("<gpxtpx:hr>150</gpxtpx:hr>", "<gpxtpx:hr>1e300</gpxtpx:hr>", "track point 1: a heart rate of 1e+300 bpm, outside 0-300 bpm"),
            ("<gpxtpx:cad>85</gpxtpx:cad>", "<gpxtpx:cad>-85</gpxtpx:cad>", "track point 1: a cadence of -85.0 per minute, outside 0-400 per minute"),
            ("<gpxtpx:cad>85</gpxtpx:cad>", "<gpxtpx:cad>NaN</gpxtpx:cad>", "line 4: cad 'NaN' is not a finite number"),
            ("lon=\"7.0\"", "lon=\"nan\"", "line 4: a track point's lon 'nan' is not a number of degrees within -180...180"),
            ("lon=\"7.0\"", "lon=\"1e308\"", "line 4: a track point's lon '1e308' is not a number of degrees within -180...180"),
        ]
        for (original, replacement, reason) in hostile {
            let error = try #require(Self.problem(gpx.replacingOccurrences(of: original, with: replacement), "hostile.gpx"), "\(replacement)")
            #expect(error.problem == .malformedWorkout(format: .gpx, reason: reason), "\(replacement): \(error)")
            #expect(error.description.hasPrefix("hostile.gpx: not a readable GPX workout: "), "\(error)")
        }
        let tcx = WorkoutFiles.tcx(WorkoutSecond.steady(30, cadence: 85, heartRate: 150, speed: 3))
            .replacingOccurrences(of: "<DistanceMeters>3.0</DistanceMeters>", with: "<DistanceMeters>1e308</DistanceMeters>")
        #expect(Self.problem(tcx, "far.tcx")?.problem
            == .malformedWorkout(format: .tcx, reason: "track point 2: a distance of 1e+308 m, outside 0-4000000000 m"))
    }

    @Test func aSampleTimedBeforeTheOneBeforeItIsNamedByWhatTheFormatCallsIt() throws {
        // The third track point, timed a minute before the first: a GPX has no lines of data.
        let gpx = WorkoutFiles.gpx(Self.run).replacingOccurrences(of: "<time>2024-05-01T07:30:02Z</time>", with: "<time>2024-05-01T07:29:00Z</time>")
        let error = try #require(Self.problem(gpx, "backwards.gpx"))
        #expect(error.code.rawValue == "malformed-workout", "\(error)")
        #expect(
            error.description == "backwards.gpx: not a readable GPX workout: track point 3 is timed 61.0 s before the one before it",
            "\(error)")
    }

    @Test func aGPXOfMoreThanTenMegabytesIsRead() throws {
        // 17 hours at a point a second: 10.6 MB, past the 10 MB libxml2 takes in one piece.
        let gpx = WorkoutFiles.gpx(WorkoutSecond.steady(61_000, cadence: 85, heartRate: 150, speed: 3))
        try #require(gpx.utf8.count > 10_000_000, "\(gpx.utf8.count) bytes")
        let report = try Self.report(gpx, "long.gpx")
        #expect(abs((report.cadence ?? 0) - 170) < 0.01, "\(report.cadence ?? 0)")
    }

    @Test func aGPXWithoutCadenceNamesWhatItLacks() throws {
        let error = try #require(Self.problem(WorkoutFiles.gpx(Self.run, cadence: false), "no-cadence.gpx"))
        #expect(error.code.rawValue == "no-cadence")
        #expect(error.description == "no-cadence.gpx: no cadence: the GPX file's samples have no gpxtpx:cad (Garmin's TrackPointExtension)")
    }

    /// Entities are refused wherever the declaration is: after a comment longer than the part
    /// of the file that was searched for it (64 KiB), and in UTF-16.
    @Test func xmlBombsAreRefusedBeforeParsing() throws {
        let laughs = (1...9).map { level in
            "<!ENTITY lol\(level) \"" + String(repeating: "&lol\(level - 1);", count: 10) + "\">"
        }.joined()
        let body = "<!DOCTYPE gpx [<!ENTITY lol0 \"lol\">\(laughs)]><gpx><trk><trkseg><trkpt lat=\"1\" lon=\"1\"><time>&lol9;</time></trkpt></trkseg></trk></gpx>"
        let comment = "<!-- <gpx " + String(repeating: "padding ", count: 10_000) + "-->"
        let started = ContinuousClock.now
        for (name, text) in [("bomb.gpx", "<?xml version=\"1.0\"?>" + body), ("late-bomb.gpx", "<?xml version=\"1.0\"?>" + comment + body)] {
            let error = try #require(Self.problem(text, name), "\(name)")
            #expect(error.problem == .malformedWorkout(format: .gpx, reason: "a document type declaration, which neither GPX nor TCX has"),
                "\(name): \(error)")
        }
        #expect(ContinuousClock.now - started < .seconds(5))
        // Read as GPX whatever its content says (as the fuzz target does): UTF-16 is refused.
        var utf16: [UInt8] = [0xFF, 0xFE]
        for unit in ("<?xml version=\"1.0\" encoding=\"UTF-16\"?>" + body).utf16 { utf16 += [UInt8(unit & 0xFF), UInt8(unit >> 8)] }
        #expect(throws: CadenceError.self) { try WorkoutReader.read(utf16, format: .gpx, file: "utf16.gpx") }
    }

    /// An element name that is no UTF-8 (found by the fuzz target): Foundation's XMLParser
    /// trapped on it, killing the process that read the file.
    @Test func bytesThatAreNoUTF8AreRefusedNotTrappedOn() throws {
        var tcx = Array(WorkoutFiles.tcx(Self.ride, sport: "Biking").utf8)
        let time = Array("<Time>".utf8)
        let at = try #require((0..<tcx.count - time.count).dropFirst(400).first { tcx[$0..<$0 + time.count].elementsEqual(time) })
        tcx.replaceSubrange(at + 1..<at + 3, with: [0xFF, 0xFF])
        let error = try #require(Self.problem(tcx, "latin.tcx"))
        #expect(error.problem == .malformedWorkout(
            format: .tcx, reason: "byte \(at + 1) is not UTF-8: the file is not UTF-8 text (convert it to UTF-8)"), "\(error)")
    }

    /// A FIT file of one-byte records (compressed timestamps, all at one second) held a sample
    /// each: 20 MB made a billion bytes of samples. At most a day at ten a second is read.
    @Test func aFITFileOfEndlessTinyRecordsIsRefusedAtTheLimit() throws {
        var writer = FITFileWriter()
        writer.define(local: 0, global: FITFileWriter.Profile.fileID, fields: [(0, .enumeration)])
        writer.data(local: 0, [FITFileWriter.Profile.activity])
        writer.define(local: 1, global: FITFileWriter.Profile.record, fields: [(253, .uint32), (4, .uint8)])
        writer.data(local: 1, [WorkoutFiles.fitStart, 85])
        writer.define(local: 2, global: FITFileWriter.Profile.record, fields: [])
        let offset = UInt8(WorkoutFiles.fitStart & 0x1F)
        for _ in 0..<Workout.maximumSamples { writer.compressedData(local: 2, timeOffset: offset, []) }
        let error = try #require(Self.problem(writer.bytes, "tiny.fit"))
        #expect(error.problem == .malformedWorkout(
            format: .fit, reason: "more than 864000 samples (a day at ten a second; watches record one a second)"), "\(error)")
    }
}
