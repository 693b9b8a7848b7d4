import Foundation
import TactusDetector
import TactusModel
import TactusStore

/// Songs and analyses for the tests of the library and of the commands that read it: song `n`
/// has a fixed id, tags, duration and envelope; detectors are played by plain descriptors.
public enum LibraryFixture {
    /// The id of song `n` (the SHA-256 of `song n`).
    public static func songID(_ n: Int) -> SongID { SongID(hashing: Data("song \(n)".utf8)) }

    /// Song `n`: a FLAC file's record with tags and a 50-value envelope.
    public static func song(_ n: Int, duration: Double = 180, title: String? = nil, artist: String? = nil) -> SongRecord {
        SongRecord(
            id: songID(n), fileName: "song-\(n).flac", byteSize: 1000 + n, format: "flac", codec: "flac",
            sampleRate: 44100, channels: 2, durationS: duration,
            tags: AudioTags(
                title: title ?? "Title \(n)", artist: artist ?? "Artist \(n % 7)", album: "Album", genre: "Test", year: 2000 + n % 20),
            addedAt: Date(timeIntervalSince1970: 1_700_000_000 + Double(n)),
            envelope: EnergyEnvelope(hopS: 1024.0 / 44100, values: (0..<50).map { Float($0) * 0.01 + Float(n) }))
    }

    /// A detector without parameters of its own.
    public static func descriptor(_ name: String, version: String = "1") -> DetectorDescriptor {
        DetectorDescriptor(name: name, version: version, summary: "test detector", specific: [])
    }

    /// `count` windows of 6 s every 4.5 s near `bpm`, every tenth without a tempo.
    public static func windows(count: Int = 40, bpm: Double?) -> [AnalysisWindow] {
        (0..<count).map { i -> AnalysisWindow in
            let start = Double(i) * 4.5
            let energy = 0.01 * Double(i % 5) + 0.001
            let tempo: Double? = i % 10 == 9 ? nil : bpm.map { $0 + Double(i % 3) * 0.1 }
            return AnalysisWindow(startS: start, durationS: 6, energy: energy, bpm: tempo, strength: Double(i % 4) / 4)
        }
    }

    /// An analysis by `detector` finding `bpm` (nil: no tempo, for silence).
    public static func analysis(
        _ detector: String, bpm: Double?, confidence: Double = 0.8, version: String = "1", preset: String = "default",
        seconds: Double = 0.25, windows: Int = 40
    ) -> TempoAnalysis {
        let descriptor = descriptor(detector, version: version)
        let params = try! descriptor.resolve(ParameterSet(["preset": .text(preset)]))
        let candidates = bpm.map { [TempoCandidate(bpm: $0, strength: 1), TempoCandidate(bpm: $0 / 2, strength: 0.6)] } ?? []
        return TempoAnalysis(
            descriptor: descriptor, params: params,
            output: DetectorOutput(
                bpm: bpm, reason: bpm == nil ? "silence" : nil, confidence: confidence, candidates: candidates,
                windows: Self.windows(count: windows, bpm: bpm)),
            seconds: seconds)
    }

    /// A stored analysis by `detector`.
    public static func record(
        _ detector: String, bpm: Double?, confidence: Double = 0.8, version: String = "1", preset: String = "default",
        worker: String? = "worker-1", at date: Date = Date(timeIntervalSince1970: 1_750_000_000)
    ) -> AnalysisRecord {
        AnalysisRecord(
            analysis(detector, bpm: bpm, confidence: confidence, version: version, preset: preset), worker: worker,
            analyzedAt: date)
    }

    /// A library in a fresh temporary folder.
    public static func library(in directory: TemporaryDirectory, name: String = "library.sqlite") throws -> Library {
        try Library(path: directory.file(name))
    }

    /// Adds songs 0..<count with the three detectors' tempi given by `tempi(n)`.
    public static func populate(
        _ library: Library, count: Int, tempi: (Int) -> (Double?, Double?, Double?)
    ) throws {
        try library.record(
            (0..<count).map { n in
                let (a, b, c) = tempi(n)
                return SongAnalyses(
                    song: song(n),
                    analyses: [record("alpha", bpm: a), record("beta", bpm: b), record("gamma", bpm: c)])
            })
    }
}
