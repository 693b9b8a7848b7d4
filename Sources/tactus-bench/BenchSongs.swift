import Foundation
import Synchronization
import TactusTestSupport

/// The songs of the server benchmark: synthesised drum patterns at varied tempi and in three
/// patterns, 44.1 kHz stereo FLAC, written once into a cache directory under the system's
/// temporary directory and reused by later runs (a file is renamed into place only when
/// complete).
enum BenchSongs {
    static let sampleRate = 44_100

    /// The tempo of song `index`: spread over 80 to 170 BPM.
    static func bpm(_ index: Int) -> Double {
        80 + Double((index * 37) % 91) + Double(index % 4) * 0.25
    }

    /// The paths of `count` songs of `seconds` each, synthesising those not in the cache yet
    /// (two at a time, one per core).
    static func prepare(count: Int, seconds: Double) throws -> (paths: [String], synthesisedSeconds: Double) {
        let directory = FileManager.default.temporaryDirectory.path + "/tactus-bench-server-songs/\(Int(seconds))s-v1"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let paths = (0..<count).map { String(format: "\(directory)/song-%03d.flac", $0) }
        let missing = paths.indices.filter { !FileManager.default.fileExists(atPath: paths[$0]) }
        let start = ContinuousClock.now
        let failures = ErrorLog()
        DispatchQueue.concurrentPerform(iterations: missing.count) { position in
            let index = missing[position]
            do {
                try write(index, seconds: seconds, to: paths[index])
            } catch {
                failures.add("\(paths[index]): \(error)")
            }
        }
        if let first = failures.first { throw BenchFailure(first) }
        return (paths, missing.isEmpty ? 0 : (ContinuousClock.now - start).seconds)
    }

    /// One song of `seconds` at `sampleRate` (stereo FLAC, a backbeat at 123 BPM), cached like
    /// the others: for the whole-process and memory figures.
    static func single(seconds: Double, sampleRate: Int) throws -> String {
        let directory = FileManager.default.temporaryDirectory.path + "/tactus-bench-server-songs/single-v1"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = "\(directory)/\(Int(seconds))s-\(sampleRate)Hz.flac"
        guard !FileManager.default.fileExists(atPath: path) else { return path }
        let rate = Double(sampleRate)
        let channels = (1...2).map {
            Synth.drumPattern(bpm: 123, seconds: seconds, sampleRate: rate, pattern: .backbeat, seed: UInt64(100 + $0))
        }
        let partial = path + ".partial"
        try AudioFileWriter(.flac).write(channels, sampleRate: sampleRate, to: partial)
        try FileManager.default.moveItem(atPath: partial, toPath: path)
        return path
    }

    /// `count` different small songs of `seconds` each (``tiny(index:seconds:)``).
    static func tiny(_ count: Int, seconds: Double = 6) throws -> [[UInt8]] {
        try (0..<count).map { try tiny(index: $0, seconds: seconds) }
    }

    /// Small song number `index`: `seconds` of 8 kHz mono 16-bit WAV in memory, a click track
    /// at the tempo ``bpm(_:)``, whose first samples also spell the index (so no two songs are
    /// the same bytes).
    static func tiny(index: Int, seconds: Double = 6) throws -> [UInt8] {
        var signal = Synth.clickTrack(bpm: bpm(index), seconds: seconds, sampleRate: 8000)
        for byte in 0..<3 { signal[byte] = Float((index >> (8 * byte)) & 0xFF) / 32768 }
        return try AudioFileWriter(.wav16).encode([signal], sampleRate: 8000)
    }

    private static func write(_ index: Int, seconds: Double, to path: String) throws {
        let patterns: [Synth.Pattern] = [.fourOnTheFloor, .backbeat, .halfTime]
        let pattern = patterns[index % patterns.count]
        let rate = Double(sampleRate)
        let left = Synth.drumPattern(bpm: bpm(index), seconds: seconds, sampleRate: rate, pattern: pattern, seed: UInt64(2 * index + 1))
        let right = Synth.drumPattern(bpm: bpm(index), seconds: seconds, sampleRate: rate, pattern: pattern, seed: UInt64(2 * index + 2))
        let partial = path + ".partial"
        try AudioFileWriter(.flac).write([left, right], sampleRate: sampleRate, to: partial)
        try FileManager.default.moveItem(atPath: partial, toPath: path)
    }
}

/// A benchmark that cannot go on, with the reason.
struct BenchFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Error messages gathered from several threads.
final class ErrorLog: Sendable {
    private let messages = Mutex<[String]>([])

    func add(_ message: String) {
        messages.withLock { $0.append(message) }
    }

    var first: String? { messages.withLock { $0.first } }
    var all: [String] { messages.withLock { $0 } }
}
