import Foundation
import TactusAnalysis
import TactusAudio
import TactusDetector
import TactusModel
import TactusProtocol
import TactusStore
import TactusTestSupport
import Testing


/// `protocol/examples/worker.py` and `client.py`, written from the SPEC with nothing but pyzmq,
/// against a real `tactus serve`: the external detector is offered, run, stored and returned
/// like the built-ins.
@Suite(.serialized, .enabled(if: CLI.pythonHasZMQ, "needs python3 with pyzmq and numpy: run `make deps`"))
struct PythonExamplesTests {
    private static let examples = URL(fileURLWithPath: CLI.repositoryRoot).appendingPathComponent("protocol/examples")
    /// The built-in detectors a submission that names none asks for (every one votes).
    private static let builtins = Set(BuiltinDetectors.registry.defaultNames)
    /// The built-in detectors the server's workers offer (advisory ones too).
    private static let offeredBuiltins = Set(BuiltinDetectors.registry.names)

    @Test func theExampleWorkerAndClientWorkWithTheRealServer() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-python-examples")
        let music = directory.file("music")
        try FileManager.default.createDirectory(atPath: music, withIntermediateDirectories: true)
        let tempi = ["a-100.wav": 100.0, "b-120.wav": 120, "c-140.wav": 140]
        for (name, bpm) in tempi {
            let signal = Synth.drumPattern(bpm: bpm, seconds: 12, sampleRate: 22_050)
            try AudioFileWriter(.wav16).write([signal, signal], sampleRate: 22_050, to: music + "/" + name)
        }
        // The Python detector reads WAV only: its job for a FLAC song fails, the built-ins' do not.
        let flacSignal = Synth.drumPattern(bpm: 110, seconds: 12, sampleRate: 22_050, pattern: .backbeat)
        try AudioFileWriter(.flac).write([flacSignal], sampleRate: 22_050, to: music + "/d-110.flac")
        #expect(FileManager.default.createFile(atPath: music + "/notes.txt", contents: Data("not audio".utf8)))

        let server = try ServeProcess(dataDirectory: directory.file("data"))
        let worker = try PythonProcess(Self.examples.appendingPathComponent("worker.py").path, ["--connect", server.endpoints.backend])
        defer { worker.stop() }
        let client = try ServerClient(server.endpoints)

        // `detectors` lists the external detector next to the built-ins once its worker is in.
        var offered: [OfferedDetector] = []
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            guard let response = try client.request(.detectors).answer(DetectorsCommand.self) else { throw ServerTestError("detectors refused") }
            offered = response.detectors
            let workers = Dictionary(offered.map { ($0.detector.name, $0.workers) }, uniquingKeysWith: +)
            if workers["python-onset"] == 1 && Self.builtins.allSatisfy({ workers[$0, default: 0] >= 1 }) { break }
            Thread.sleep(forTimeInterval: 0.1)
        }
        let python = try #require(offered.first { $0.detector.name == "python-onset" }, "worker log:\n\(worker.log)")
        #expect(python.detector.version == "1.0")
        #expect(python.detector.parameters.map(\.name) == ["preset", "min_bpm", "max_bpm", "hop_ms"])
        #expect(Set(offered.map(\.detector.name)) == Self.offeredBuiltins.union(["python-onset"]))

        let run = try CLI.python(
            [
                Self.examples.appendingPathComponent("client.py").path,
                music, "--server", server.endpoints.frontend, "--events", server.endpoints.events, "--query", "90", "150", "--json",
            ],
            timeout: .seconds(180))
        #expect(run.status == 0, "client.py: \(run.standardError)\nworker log:\n\(worker.log)")
        #expect(run.standardError.contains("4 songs submitted"))
        let lines = try run.standardOutput.split(separator: "\n").map {
            try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any], "not JSON: \($0)")
        }
        let songLines = lines.filter { $0["file"] as? String != nil && $0["analyses"] != nil }
        let matches = lines.filter { $0["analyses"] == nil }
        #expect(songLines.map { ($0["file"] as? String).map { ($0 as NSString).lastPathComponent } } == [
            "a-100.wav", "b-120.wav", "c-140.wav", "d-110.flac",
        ])
        var consensus = [String: Double]()
        for line in songLines {
            let file = ((line["file"] as? String ?? "") as NSString).lastPathComponent
            let song = try #require(line["song"] as? String)
            let analyses = try #require(line["analyses"] as? [[String: Any]])
            let detectors = analyses.compactMap { $0["detector"] as? String }
            #expect(Self.builtins.isSubset(of: detectors), "\(file): \(detectors)")
            consensus[song] = (line["consensus"] as? [String: Any])?["bpm"] as? Double
            if let bpm = tempi[file] {
                let onset = try #require(analyses.first { $0["detector"] as? String == "python-onset" }, "\(file): \(detectors)")
                #expect(TempoRelation.acc2(onset["bpm"] as? Double, bpm), "\(file): python-onset found \(String(describing: onset["bpm"]))")
                #expect(TempoRelation.acc2(consensus[song], bpm), "\(file): consensus \(String(describing: consensus[song]))")
            }
        }
        // The query lists exactly the songs whose consensus tempo lies in the range.
        let inRange = Set(consensus.filter { (90...150).contains($0.value) }.keys)
        #expect(Set(matches.compactMap { $0["song"] as? String }) == inRange)
        #expect(matches.allSatisfy { ($0["bpm"] as? Double).map { (90...150).contains($0) } == true })

        // `result` returns the external analysis like a built-in one; the FLAC's Python job failed.
        let wavSong = try #require(songLines.first { ($0["file"] as? String)?.hasSuffix("b-120.wav") == true }?["song"] as? String)
        guard let result = try client.request(.result(ResultRequest(song: wavSong))).answer(ResultCommand.self)?.body else {
            throw ServerTestError("no result for \(wavSong)")
        }
        let onset = try #require(result.analyses.first { $0.detector == "python-onset" })
        #expect(onset.version == "1.0")
        #expect(onset.params["hop_ms"] == .number(10))
        #expect(TempoRelation.acc2(onset.bpm, 120))
        let flacID = try #require(songLines.first { ($0["file"] as? String)?.hasSuffix("d-110.flac") == true }?["song"] as? String)
        let flacSong = try #require(SongID(flacID))
        let flacJobs = try client.jobs(of: flacSong)
        let failed = try #require(flacJobs.first { $0.detector == "python-onset" })
        #expect(failed.state == .failed && failed.error?.code == .unsupportedFormat)
        #expect(flacJobs.filter { Self.builtins.contains($0.detector) }.allSatisfy { $0.state == .done })

        worker.stop()
        #expect(worker.status == 0, "worker log:\n\(worker.log)")
        #expect(server.stop() == 0)
        // Stored in the library next to the built-ins' analyses.
        let library = try Library(path: server.dataDirectory + "/library.sqlite", options: .init(mode: .readOnly))
        let stored = try library.analyses(of: try #require(SongID(wavSong)))
        #expect(Set(stored.map(\.record.analysis.detector)) == Self.builtins.union(["python-onset"]))
    }
}

/// A Python program (`python3 SCRIPT ARGS...`) running next to the test, its standard error
/// kept as its log.
final class PythonProcess {
    private let process = Process()
    private let logFile: String

    init(_ script: String, _ arguments: [String]) throws {
        logFile = FileManager.default.temporaryDirectory.path + "/tactus-python-\(UUID().uuidString).log"
        _ = FileManager.default.createFile(atPath: logFile, contents: nil)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script] + arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: logFile))
        try process.run()
    }

    /// What the program wrote to standard error so far.
    var log: String {
        (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? ""
    }

    /// The exit status, once the program has ended.
    var status: Int32? {
        process.isRunning ? nil : process.terminationStatus
    }

    /// SIGTERM, then waits for the end.
    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: logFile)
    }
}
