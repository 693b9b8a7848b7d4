import Foundation
import TactusCadence
import TactusModel
import TactusTestSupport
import Testing

@Suite struct RecordingReaderTests {
    /// `count` lines of `t,x,y,z` at `rate` Hz, gravity on z in m/s^2.
    static func plainLines(count: Int, rate: Double = 100) -> [String] {
        (0..<count).map { String(format: "%.4f,0.1,0.2,9.8", Double($0) / rate) }
    }

    static func read(_ text: String) throws(CadenceError) -> AccelerometerRecording {
        try RecordingReader.read(Array(text.utf8), file: "walk.csv")
    }

    @Test func eachLoggerLayoutIsRecognisedWithItsUnit() throws {
        var synth = StepRecordingSynth(stretches: [.init(seconds: 12, from: 150)])
        synth.rate = 50
        let recording = synth.render()
        let expected: [(StepRecordingSynth.Recording.CSVLayout, RecordingFormat, AccelerationUnit?)] = [
            (.plain, .plain, nil), (.sensorLogger, .sensorLogger, nil), (.phyphox, .phyphox, .metresPerSecondSquared),
            (.phyphoxDecimalComma, .phyphox, .metresPerSecondSquared), (.physicsToolbox, .physicsToolbox, .standardGravity),
            (.physicsToolboxClock, .physicsToolbox, .standardGravity),
        ]
        for (layout, format, unit) in expected {
            let read = try Self.read(recording.csv(layout))
            #expect(read.format == format, "\(layout)")
            #expect(read.declaredUnit == unit, "\(layout)")
            #expect(read.count == recording.times.count, "\(layout)")
            // Axes in x, y, z order whatever the column order; times from 0 (or the first clock time).
            #expect(abs(read.x[10] - recording.x[10]) < 1e-3 && abs(read.z[10] - recording.z[10]) < 1e-3, "\(layout)")
            #expect(abs((read.times[10] - read.times[0]) - (recording.times[10] - recording.times[0])) < 1e-3, "\(layout)")
        }
    }

    @Test func headersWithOtherNamesAndUnits() throws {
        let body = Self.plainLines(count: 100).joined(separator: "\n")
        #expect(try Self.read("time_ms,ax,ay,az\n" + Self.plainLines(count: 100, rate: 0.1).joined(separator: "\n")).count == 100)
        #expect(try Self.read("timestamp,acc_x (g),acc_y (g),acc_z (g)\n" + body).declaredUnit == .standardGravity)
        #expect(try Self.read("time,x,y,z,extra\n" + body.replacingOccurrences(of: "\n", with: ",0\n") + ",0").count == 100)
        #expect(try Self.read(body).format == .plain)
        #expect(try Self.read("# recorded on a phone\n\nt,x,y,z\r\n" + body.replacingOccurrences(of: "\n", with: "\r\n")).count == 100)
    }

    @Test func clockTimesCrossMidnight() throws {
        let lines = (0..<100).map { index -> String in
            let seconds = 86_399.5 + Double(index) * 0.01
            let day = seconds >= 86_400 ? "04" : "03"
            let clock = seconds.truncatingRemainder(dividingBy: 86_400)
            return String(format: "2018-10-%@ %02d:%02d:%07.4f,0,0,1,1", day, Int(clock) / 3600, Int(clock) % 3600 / 60,
                clock.truncatingRemainder(dividingBy: 60))
        }
        let read = try Self.read("time,gFx,gFy,gFz,TgF\n" + lines.joined(separator: "\n"))
        #expect(abs(read.duration - 0.99) < 1e-6)
    }

    static func problem(_ text: [UInt8]) -> CadenceError? {
        do {
            _ = try RecordingReader.read(text, file: "bad.csv")
            return nil
        } catch {
            return error
        }
    }

    static func problem(_ text: String) -> CadenceError? { problem(Array(text.utf8)) }

    @Test func badInputGetsATypedErrorNamingTheFileAndTheProblem() throws {
        let header = "t,x,y,z\n"
        var lines = Self.plainLines(count: 200)
        let cases: [(String, CadenceError?, CadenceError.Problem)] = [
            ("empty", Self.problem(""), .notARecording("the file is empty")),
            ("binary", Self.problem([0x49, 0x44, 0x33, 0x04, 0x00, 0x00, 0x10]), .notARecording("binary data (a NUL byte)")),
            ("no axes", Self.problem("time,heart rate\n1,60\n"),
                .notARecording("the header names no time column and x, y, z axes: 'time,heart rate'")),
            ("few", Self.problem(header + Self.plainLines(count: 20).joined(separator: "\n")),
                .tooFewSamples(count: 20, seconds: 0.19, minimumSeconds: 10)),
            ("NaN", Self.problem(header + lines[0..<50].joined(separator: "\n") + "\n0.5,nan,0,9.8\n"),
                .notANumber(line: 52, column: "x", text: "nan")),
            ("text", Self.problem(header + "0,0,0,9.8\n0.01,0,abc,9.8\n"), .notANumber(line: 3, column: "y", text: "abc")),
            ("short line", Self.problem(header + "0,0,0,9.8\n0.01,0,0\n"), .missingFields(line: 3, expected: 4, found: 3)),
            ("backwards", Self.problem(header + "0,0,0,9.8\n0.02,0,0,9.8\n0.01,0,0,9.8\n"),
                .nonMonotonicTime(line: 4, time: 0.01, previous: 0.02)),
            ("duplicate", Self.problem(header + "0,0,0,9.8\n0.01,0,0,9.8\n0.01,0,0,9.8\n"), .duplicateTime(line: 4, time: 0.01)),
        ]
        for (name, error, problem) in cases {
            let error = try #require(error, "\(name)")
            #expect(error.problem == problem, "\(name): \(error)")
            #expect(error.file == "bad.csv" && error.description.hasPrefix("bad.csv: "), "\(name)")
        }
        // Absurd rates: times in milliseconds under a seconds header (0.1 Hz), or 10 kHz.
        lines = (0..<200).map { "\($0 * 10),0,0,9.8" }
        let slow = try #require(Self.problem(header + lines.joined(separator: "\n")))
        #expect(slow.problem == .absurdRate(hertz: 0.1, accepted: RecordingReader.acceptedRates))
        #expect(slow.message.contains("0.1 Hz"))
        lines = (0..<200).map { String(format: "%.4f,0,0,9.8", Double($0) / 10_000) }
        #expect(Self.problem(header + lines.joined(separator: "\n"))?.code.rawValue == "absurd-rate")
    }

    /// Recordings built to break the reader (issue 27): finite but absurd times, clock times out
    /// of any day, endless headers. Each is refused, quickly, with what is wrong.
    @Test func hostileTimesAndHeadersAreRefusedNotTrappedOn() throws {
        let rows = Self.plainLines(count: 2999).joined(separator: "\n")
        let endings: [(String, Double)] = [("1e308", 1e308), ("400000", 400_000), ("1e7", 1e7)]
        for (text, seconds) in endings {
            let error = try #require(Self.problem("t,x,y,z\n" + rows + "\n\(text),0.1,0.2,9.8\n"), "\(text)")
            guard case .spanTooLong(seconds, let limit) = error.problem else { Issue.record("\(text): \(error)"); continue }
            #expect(abs(limit - 86_400) < 0.01, "\(text): \(error)")
            #expect(error.description.hasPrefix("bad.csv: the samples span "))
        }
        // A day at 500 Hz would need 43.2 million samples: the span allowed shrinks with the rate.
        let fast = (0..<200).map { String(format: "%.6f,0,0,9.8", Double($0) / 500) } + ["20000,0,0,9.8"]
        let error = try #require(Self.problem("t,x,y,z\n" + fast.joined(separator: "\n")))
        guard case .spanTooLong(20_000, let limit) = error.problem, abs(limit - 17_280) < 0.01 else {
            Issue.record("\(error)")
            return
        }

        var clock = ["time,gFx,gFy,gFz,TgF"]
        for index in 0..<200 { clock.append(String(format: "17:23:%02d.%03d,0.01,0.02,1.0,1.0", 10 + index / 100, (index % 100) * 10)) }
        for hostile in ["9999999999999999:00:00.000", "17:99:00.000", "17:23:61.000", "99999-01-01 17:23:59.000", "17:23:59:5000"] {
            let error = try #require(Self.problem((clock + ["\(hostile),0.01,0.02,1.0,1.0"]).joined(separator: "\n")), "\(hostile)")
            #expect(error.problem == .notANumber(line: 202, column: "time", text: hostile), "\(hostile): \(error)")
        }

        let started = ContinuousClock.now
        let endless = Array("time,".utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: 60 << 20)
        #expect(Self.problem(endless)?.problem == .headerTooLong(bytes: endless.count, limit: 4096))
        let commas = [UInt8]("time,x,y,z".utf8) + Array(repeating: Array(",a".utf8), count: 5000).flatMap { $0 }
        #expect(Self.problem(commas)?.code.rawValue == "header-too-long")
        #expect(ContinuousClock.now - started < .seconds(20))
    }

    @Test func aFileOverTheSizeLimitIsNotRead() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-recording")
        let path = directory.file("huge.csv")
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.truncate(atOffset: UInt64(RecordingReader.maximumFileBytes + 1))
        try handle.close()
        #expect(throws: CadenceError(file: path, .tooLarge(bytes: RecordingReader.maximumFileBytes + 1, limit: RecordingReader.maximumFileBytes))) {
            try RecordingReader.read(path: path)
        }
    }

    @Test func aRecordingShorterThanOneWindowIsTooShortToAnalyse() throws {
        let recording = try Self.read("t,x,y,z\n" + Self.plainLines(count: 500).joined(separator: "\n"))
        #expect(throws: CadenceError(file: "short", .tooFewSamples(count: 500, seconds: 4.99, minimumSeconds: 10))) {
            try CadenceAnalyzer().analyze(recording, file: "short")
        }
    }
}

@Suite struct ResamplingTests {
    @Test func irregularSamplesOfASlowSineAreRestored() {
        var random = SeededGenerator(seed: 21)
        let times = (0..<5000).map { Double($0) / 500 + Double(random.nextSigned()) * 0.0009 }
        let values = times.map { sin(2 * .pi * 3 * $0) }
        let resampled = Sampling.resample(times: times, values: values, rate: 100, cutoff: 12)
        #expect(resampled.count == Int(((times.last! - times[0]) * 100).rounded(.down)) + 1)
        for index in stride(from: 20, to: resampled.count - 20, by: 7) {
            let time = times[0] + Double(index) / 100
            #expect(abs(resampled[index] - sin(2 * .pi * 3 * time)) < 0.02, "at \(time) s")
        }
    }

    @Test func frequenciesAboveTheNewNyquistDoNotAlias() {
        // 90 Hz at 500 Hz would fold to 10 Hz at 100 Hz without the low-pass.
        let times = (0..<5000).map { Double($0) / 500 }
        let values = times.map { sin(2 * .pi * 90 * $0) }
        let resampled = Sampling.resample(times: times, values: values, rate: 100, cutoff: 12)
        let peak = resampled[50..<(resampled.count - 50)].map(abs).max() ?? 1
        #expect(peak < 0.01)
    }
}
