import ArgumentParser
import Foundation
import TactusAnalysis
import TactusClient
import TactusProtocol
import TactusTestSupport
import TactusZMQ

/// `tactus-bench memory`: the coordinator's peak resident memory while huge songs arrive at
/// once (issue 13: a 4 GiB file took it to 4.2 GB, six 500 MiB uploads to 3.6 GB).
struct MemoryBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "memory",
        abstract: "The coordinator's peak memory while huge songs are sent at once: refused or queued, never held whole.",
        discussion: """
            A fresh `tactus serve` with a library root. At once: a submit by path of a sparse \
            --file-gib GiB file under the root; --uploads songs of --upload-mib MiB each in one \
            `submit` message (as an older client sends them); and as many again through \
            TactusClient, which sends songs over 1 MiB as an upload in chunks. Then, unless \
            --accepted-mib is 0, --uploads different WAV songs of that size that the server \
            accepts, uploaded at once. Reported: each answer, and the coordinator's peak resident \
            memory (VmHWM) after each phase. Target: under --limit-mib (300) while the huge songs \
            are refused. The accepted songs are held whole while they are hashed, probed and \
            stored, within the server's --max-intake-bytes (an eighth of the memory by default; \
            pass --serve-option --max-intake-bytes=N to bound it): their peak is reported, not \
            judged.
            """
    )

    @Option(help: "Songs sent at once in each way.")
    var uploads = 6

    @Option(help: "Size of each refused song, in MiB.")
    var uploadMib = 500

    @Option(help: "Size of the sparse file under the library root, in GiB.")
    var fileGib = 4

    @Option(help: "Size of each accepted song of the second phase, in MiB (0: no second phase).")
    var acceptedMib = 100

    @Option(help: "The target: the coordinator's peak resident memory, in MiB.")
    var limitMib = 300.0

    @Option(
        parsing: .unconditionalSingleValue,
        help: ArgumentHelp("An option for tactus serve, such as --max-intake-bytes=100000000 (repeatable).", valueName: "option"))
    var serveOption: [String] = []

    @OptionGroup var tactus: TactusExecutableOption

    @Flag(help: "Print one JSON object with every figure.")
    var json = false

    struct Report: Encodable {
        var resident_before_mib: Double
        var peak_after_refusals_mib: Double
        var peak_after_accepted_mib: Double?
        var refusals: [String]
        var accepted: [String]
        var limit_mib: Double
        var meets: Bool
    }

    func run() throws {
        let executable = try tactus.path()
        let data = try TemporaryDirectory(prefix: "tactus-bench-memory-data")
        let root = data.file("music")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let huge = root + "/huge.flac"
        guard FileManager.default.createFile(atPath: huge, contents: nil), truncate(huge, off_t(fileGib) << 30) == 0 else {
            throw BenchFailure("cannot make the sparse file \(huge)")
        }
        let server = try ServeProcess(
            executable: executable, dataDirectory: data.file("data"), workersPerDetector: 1,
            extraArguments: ["--library-root", root] + serveOption)
        defer { server.stop() }
        try server.awaitWorkers(detectors: BuiltinDetectors.registry.names, perDetector: 1)
        let before = PeakMemory.residentMiB(field: "VmRSS", pid: server.processID) ?? 0
        let frontend = server.endpoints.frontend

        // Phase 1: everything refused, all at once.
        let big = [UInt8](repeating: 0x55, count: uploadMib << 20)
        let answers = ErrorLog()
        var threads: [Thread] = []
        // Each thread adds one line to its log when it is done.
        func spawn(into log: ErrorLog, _ work: @escaping @Sendable () -> String) {
            threads.append(Thread { log.add(work()) })
        }
        func runAll(_ log: ErrorLog) {
            let count = threads.count
            for thread in threads { thread.start() }
            while log.all.count < count { Thread.sleep(forTimeInterval: 0.05) }
        }
        let file = "\(fileGib) GiB file by path"
        spawn(into: answers) {
            Self.outcome(file, frontend: frontend) { client in _ = try client.send(.submit(SubmitRequest(path: huge), audio: nil)) }
        }
        for index in 0..<uploads {
            spawn(into: answers) { Self.singleMessage(big, index: index, frontend: frontend) }
            spawn(into: answers) {
                Self.outcome("upload \(index) through TactusClient", frontend: frontend) { client in
                    _ = try client.submit(SubmitRequest(name: "big-\(index).wav"), audio: big)
                }
            }
        }
        runAll(answers)
        let refusals = answers.all
        let afterRefusals = PeakMemory.residentMiB(field: "VmHWM", pid: server.processID) ?? 0
        if !json {
            print(
                "Refused at once (\(uploads) x \(uploadMib) MiB in one message, \(uploads) x \(uploadMib) MiB uploads, "
                    + "a \(fileGib) GiB file):")
            for line in refusals.sorted() { print("  \(line)") }
            print("Coordinator: \(format(before)) MiB resident before, peak \(format(afterRefusals)) MiB")
        }

        // Phase 2: songs that are accepted, uploaded at once.
        var accepted: [String] = []
        var afterAccepted: Double?
        if acceptedMib > 0 {
            let acceptances = ErrorLog()
            threads = []
            for index in 0..<uploads {
                let song = Self.silentWAV(bytes: acceptedMib << 20, variant: index)
                spawn(into: acceptances) {
                    Self.outcome("accepted \(index) (\(song.count >> 20) MiB)", frontend: frontend) { client in
                        _ = try client.submitWhileBusy(SubmitRequest(name: "accepted-\(index).wav"), audio: song)
                    }
                }
            }
            runAll(acceptances)
            accepted = acceptances.all
            afterAccepted = PeakMemory.residentMiB(field: "VmHWM", pid: server.processID) ?? 0
            if !json {
                print("Accepted, uploaded at once (\(uploads) x \(acceptedMib) MiB):")
                for line in accepted.sorted() { print("  \(line)") }
                print("Coordinator peak: \(format(afterAccepted ?? 0)) MiB")
            }
        }
        let peak = afterRefusals
        let report = Report(
            resident_before_mib: before, peak_after_refusals_mib: afterRefusals, peak_after_accepted_mib: afterAccepted,
            refusals: refusals.sorted(), accepted: accepted.sorted(), limit_mib: limitMib, meets: peak < limitMib)
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            print(String(decoding: try encoder.encode(report), as: UTF8.self))
        } else {
            print(
                "Peak while the huge songs were refused: \(format(peak)) MiB: \(report.meets ? "meets" : "MISSES") the target of "
                    + "\(format(limitMib)) MiB")
        }
        if !report.meets { throw BenchFailure("the coordinator's peak memory was \(format(peak)) MiB") }
    }

    /// What one request came to, as a line: `label: answer`.
    private static func outcome(_ label: String, frontend: String, _ work: (TactusClient) throws -> Void) -> String {
        do {
            let client = try TactusClient(server: frontend, timeout: .seconds(20))
            client.patience = .seconds(120)
            try work(client)
            return "\(label): accepted"
        } catch ClientError.rejected(let error) {
            return "\(label): \(error.code): \(error.message)"
        } catch {
            return "\(label): \(error)"
        }
    }

    /// A song sent in one `submit` message on a DEALER of its own, as a client older than
    /// uploads does; waits 10 s for an answer.
    private static func singleMessage(_ song: [UInt8], index: Int, frontend: String) -> String {
        let label = "single message \(index) (\(song.count >> 20) MiB)"
        do {
            let context = try ZMQContext(socketLinger: .zero)
            let socket = try context.socket(.dealer)
            try socket.connect(frontend)
            let body = try JSONEncoder().encode(SubmitRequest(name: "single-\(index).wav"))
            try socket.send([[], Array("TACTUS1".utf8), Array("submit".utf8), Array("m\(index)".utf8), Array(body), song])
            guard let frames = try socket.receive(timeout: .seconds(10)) else {
                return "\(label): no answer (the server dropped the connection at the frame's size)"
            }
            let reply = try ClientReply(frames: frames)
            if case .error(let error) = reply.outcome { return "\(label): \(error.code): \(error.message)" }
            return "\(label): accepted"
        } catch {
            return "\(label): \(error)"
        }
    }

    /// A mono 8 kHz 16-bit WAV file of `bytes` bytes, silent but for one sample that `variant`
    /// sets (so that each variant is another song).
    static func silentWAV(bytes: Int, variant: Int) -> [UInt8] {
        let dataBytes = UInt32(bytes - 44)
        var header: [UInt8] = Array("RIFF".utf8)
        func le32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
        func le16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
        header += le32(36 + dataBytes) + Array("WAVEfmt ".utf8) + le32(16) + le16(1) + le16(1) + le32(8000) + le32(16000)
        header += le16(2) + le16(16) + Array("data".utf8) + le32(dataBytes)
        var song = header + [UInt8](repeating: 0, count: Int(dataBytes))
        song[44 + 2 * (variant + 1)] = UInt8(truncatingIfNeeded: variant + 1)
        return song
    }

    private func format(_ value: Double) -> String { String(format: "%.1f", value) }
}
