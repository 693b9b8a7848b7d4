import ArgumentParser
import Foundation
import TactusAudio
import TactusTestSupport

/// `tactus-bench decode`: how fast 3-minute MP3 and FLAC files decode to mono float, in
/// multiples of real time, and the peak memory of decoding.
struct DecodeBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decode",
        abstract: "Decode speed (multiples of real time) and peak memory for a 3-minute MP3 and FLAC.",
        discussion: """
            Synthesises a stereo 44.1 kHz drum track, writes it as MP3 (LAME through libsndfile, \
            VBR) and FLAC into a temporary directory, then decodes each file from its path to \
            mono blocks several times and reports the best run. The floor to compare MP3 with \
            is about 2,500x real time (libmpg123 on a 2-core machine). Peak memory is the \
            resident high-water mark while decoding (Linux: VmHWM, reset before each format), \
            shown with the resident size when decoding starts: the difference is the decoder's.
            """
    )

    @Option(help: "Length of the synthesised song in seconds.")
    var seconds: Double = 180

    @Option(help: "Decoding runs per format; the best is reported.")
    var runs = 5

    @Flag(help: "Print one JSON object per format and per line.")
    var json = false

    func validate() throws {
        guard seconds >= 5, seconds <= 3600 else { throw ValidationError("--seconds must be between 5 and 3600 (got \(seconds)).") }
        guard runs >= 1, runs <= 100 else { throw ValidationError("--runs must be between 1 and 100 (got \(runs)).") }
    }

    struct Result: Encodable {
        var format: String
        var file_bytes: Int
        var audio_seconds: Double
        var best_decode_seconds: Double
        var realtime_factor: Double
        /// Resident memory when decoding starts (the process, with what synthesis left behind).
        var resident_before_mib: Double?
        /// The resident high-water mark while decoding.
        var peak_resident_mib: Double?
    }

    func run() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-bench-decode")
        let files: [(name: String, format: AudioFileWriter.Format)] = [("mp3", .mp3(.variable)), ("flac", .flac)]
        let paths = try writeSong(as: files.map(\.format), into: directory)
        for (file, path) in zip(files, paths) {
            PeakMemory.reset()
            let before = PeakMemory.residentMiB(field: "VmRSS")
            var best = Double.infinity
            var audioSeconds = 0.0
            for _ in 0..<runs {
                let clock = ContinuousClock()
                let start = clock.now
                let stream = try AudioStream(.file(path))
                var checksum: Float = 0
                while try stream.readBlock({ block in checksum += block[block.count / 2] }) {}
                let elapsed = clock.now - start
                best = min(best, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18)
                audioSeconds = stream.metadata.duration
                precondition(checksum.isFinite)
            }
            let size = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
            let result = Result(
                format: file.name, file_bytes: size, audio_seconds: audioSeconds, best_decode_seconds: best,
                realtime_factor: audioSeconds / best, resident_before_mib: before,
                peak_resident_mib: PeakMemory.residentMiB(field: "VmHWM"))
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = .sortedKeys
                print(String(decoding: try encoder.encode(result), as: UTF8.self))
            } else {
                var memory = ""
                if let before = result.resident_before_mib, let peak = result.peak_resident_mib {
                    memory = String(format: ", peak resident memory %.1f MiB (%.1f MiB before decoding)", peak, before)
                }
                print(String(format: "%@: %.1f s of audio (%d bytes) decoded in %.4f s (best of %d): %.0fx real time",
                             file.name, audioSeconds, size, best, runs, result.realtime_factor) + memory)
            }
        }
    }
}

extension DecodeBench {
    /// Writes the synthesised song in each format; the signal is released on return, so it
    /// does not count in the decoders' memory.
    func writeSong(as formats: [AudioFileWriter.Format], into directory: TemporaryDirectory) throws -> [String] {
        let sampleRate = 44100
        let drums = Synth.drumPattern(bpm: 124, seconds: seconds, sampleRate: Double(sampleRate), pattern: .backbeat)
        let pad = Synth.sine(hz: 220, seconds: seconds, sampleRate: Double(sampleRate), amplitude: 0.1)
        let channels = [drums, zip(drums, pad).map { 0.8 * $0 + $1 }]
        return try formats.enumerated().map { index, format in
            let path = directory.file("song-\(index)")
            try AudioFileWriter(format).write(channels, sampleRate: sampleRate, to: path)
            return path
        }
    }
}

/// The process's resident-memory high-water mark (Linux).
enum PeakMemory {
    /// Resets the high-water mark to the current resident size (writing 5 to clear_refs).
    static func reset() {
        try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
    }

    /// `VmHWM` (the high-water mark) or `VmRSS` (now) of this process, or of process `pid`,
    /// from /proc/PID/status, in MiB.
    static func residentMiB(field: String, pid: Int32? = nil) -> Double? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid.map(String.init) ?? "self")/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }),
              let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "") else { return nil }
        return kilobytes / 1024
    }
}
