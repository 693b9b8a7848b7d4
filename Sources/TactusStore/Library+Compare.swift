import Foundation
import GRDB
import TactusDetector
import TactusAudio

/// How a detector's tempo relates to the reference tempo of a song.
public enum ReferenceRelation: String, Sendable, Hashable, Codable {
    /// Within 4 % of the reference (counts for Acc1).
    case match
    /// Within 4 % of double or half the reference: an octave error (counts for Acc2).
    case octave
    /// Within 4 % of three times or a third of the reference (counts for Acc2).
    case triple
    /// None of these, or no tempo found.
    case wrong

    /// How `bpm` relates to `reference`.
    public init(bpm: Double?, reference: Double) {
        guard let bpm, let factor = TempoRelation.factor(of: bpm, relativeTo: reference) else {
            self = .wrong
            return
        }
        switch factor {
        case 1: self = .match
        case 2, 0.5: self = .octave
        default: self = .triple
        }
    }
}

/// Every result the library holds for one song, side by side.
public struct SongComparison: Sendable, Hashable, Codable {
    /// One detector's (or preset's) result.
    public struct Result: Sendable, Hashable, Codable {
        /// `detector` or `detector/preset`.
        public var label: String
        public var detector: String
        public var preset: String
        public var version: String
        public var status: AnalysisStatus
        public var bpm: Double?
        public var confidence: Double
        /// The strongest candidates (at most three).
        public var candidates: [TempoCandidate]
        public var seconds: Double
        public var worker: String?
        public var failure: AnalysisFailure?
        /// How `bpm` relates to the reference; nil when the song has none.
        public var relation: ReferenceRelation?
    }

    public var song: SongID
    public var file: String
    public var title: String?
    public var artist: String?
    public var durationS: Double
    public var reference: ReferenceTempo?
    public var consensus: ConsensusTempo
    /// How the consensus relates to the reference; nil when the song has none.
    public var consensusRelation: ReferenceRelation?
    /// Sorted by label, then version.
    public var results: [Result]

    enum CodingKeys: String, CodingKey {
        case song, file, title, artist, durationS = "duration_s", reference, consensus
        case consensusRelation = "consensus_relation", results
    }
}

/// How the detectors of a library compare with each other and with the reference tempi.
public struct LibraryComparison: Sendable, Hashable, Codable {
    /// Two detectors' agreement over the songs both found a tempo for.
    public struct Agreement: Sendable, Hashable, Codable {
        public var first: String
        public var second: String
        /// Songs where both found a tempo.
        public var songs: Int
        /// Share of those where the tempi are within 4 % of each other.
        public var agree: Double
        /// Share of those where they are within 4 % up to an octave (factor 1, 2 or 1/2).
        public var agreeOctave: Double

        enum CodingKeys: String, CodingKey {
            case first, second, songs, agree, agreeOctave = "agree_octave"
        }
    }

    /// One detector measured against the reference tempi.
    public struct Accuracy: Sendable, Hashable, Codable {
        public var detector: String
        /// Songs with a reference tempo that the detector analysed (with or without a tempo found).
        public var count: Int
        /// Share within 4 % of the reference.
        public var acc1: Double
        /// Share within 4 % of the reference times 1, 2, 1/2, 3 or 1/3.
        public var acc2: Double
        /// Mean absolute difference in BPM over the songs it found a tempo for (nil if none).
        public var meanAbsoluteError: Double?

        enum CodingKeys: String, CodingKey {
            case detector, count, acc1, acc2, meanAbsoluteError = "mae"
        }
    }

    /// A bin of the consensus-tempo histogram: songs with `lower <= bpm < lower + width`.
    public struct Bin: Sendable, Hashable, Codable {
        public var lower: Double
        public var width: Double
        public var count: Int
    }

    public var songs: Int
    /// Every pair of detectors (labels as in ``AnalysisRecord/label``), sorted by name.
    public var agreements: [Agreement]
    /// Every detector with at least one analysed song that has a reference tempo.
    public var accuracy: [Accuracy]
    /// The consensus tempi of the library, from the lowest bin to the highest, empty bins included.
    public var histogram: [Bin]
}

extension Library {
    /// Every detector's and preset's result for a song, with the consensus and, when known,
    /// the reference tempo and how each result relates to it.
    public func compare(_ song: SongID) throws(StoreError) -> SongComparison {
        guard let record = try self.song(song) else { throw .unknownSong(song.hex) }
        let reference = try self.reference(for: song)
        let consensus = try self.consensus(of: song) ?? ConsensusTempo(bpm: nil, detectors: [])
        let results = try analyses(of: song).map { stored in
            let a = stored.record.analysis
            return SongComparison.Result(
                label: stored.record.label, detector: a.detector, preset: stored.record.preset, version: a.version,
                status: stored.record.status, bpm: a.bpm, confidence: a.confidence,
                candidates: Array(a.candidates.prefix(3)), seconds: a.seconds, worker: stored.record.worker,
                failure: stored.record.failure,
                relation: reference.map { ReferenceRelation(bpm: a.bpm, reference: $0.bpm) })
        }
        return SongComparison(
            song: song, file: record.fileName, title: record.tags.title, artist: record.tags.artist,
            durationS: record.durationS, reference: reference, consensus: consensus,
            consensusRelation: reference.map { ReferenceRelation(bpm: consensus.bpm, reference: $0.bpm) },
            results: results)
    }

    /// Compares the detectors over the whole library: pairwise agreement, accuracy against
    /// the reference tempi, and the histogram of consensus tempi in bins of `binWidth` BPM.
    ///
    /// When a song has several analyses under one label (several versions), the most recent counts.
    public func compareLibrary(binWidth: Double = 10) throws(StoreError) -> LibraryComparison {
        guard binWidth.isFinite, binWidth > 0 else {
            throw .invalidValue(field: "bin_width", value: "\(binWidth)", accepted: "a width > 0 BPM")
        }
        return try read { db in
            // The tempo (nil: analysed, none found) of each (label, song).
            var tempi = [String: [Int64: Double?]]()
            var dates = [String: [Int64: Date]]()
            var labels = [String: String]()  // params_hash + detector -> label
            let rows = try Row.fetchCursor(
                db,
                sql: """
                    SELECT song_id, detector, params_hash, params_json, bpm, analyzed_at FROM analyses
                    WHERE status <> 'failed'
                    """)
            while let row = try rows.next() {
                let detector: String = row["detector"]
                let labelKey = detector + "\u{0}" + (row["params_hash"] as String)
                let label: String
                if let known = labels[labelKey] {
                    label = known
                } else {
                    let params = (try? JSONDecoder().decode(ParameterSet.self, from: Data((row["params_json"] as String).utf8)))
                    let preset: String
                    if case .text(let named)? = params?["preset"] { preset = named } else { preset = "default" }
                    label = preset == "default" ? detector : "\(detector)/\(preset)"
                    labels[labelKey] = label
                }
                let song: Int64 = row["song_id"]
                let date: Date = row["analyzed_at"]
                if let previous = dates[label]?[song], previous > date { continue }
                dates[label, default: [:]][song] = date
                tempi[label, default: [:]][song] = .some(row["bpm"] as Double?)
            }
            let references = try Dictionary(
                Row.fetchAll(db, sql: "SELECT song_id, bpm FROM reference_tempi").map { ($0[0] as Int64, $0[1] as Double) },
                uniquingKeysWith: { first, _ in first })
            let consensus = try Double.fetchAll(db, sql: "SELECT bpm FROM consensus WHERE bpm IS NOT NULL ORDER BY bpm")
            let songCount = try Int.fetchOne(db, sql: "SELECT count(*) FROM songs") ?? 0

            let names = tempi.keys.sorted()
            var agreements = [LibraryComparison.Agreement]()
            for (i, first) in names.enumerated() {
                for second in names[(i + 1)...] {
                    var songs = 0
                    var agree = 0
                    var agreeOctave = 0
                    for (song, a) in tempi[first]! {
                        guard let a, let b = tempi[second]![song] ?? nil else { continue }
                        songs += 1
                        if TempoRelation.matches(a, b) { agree += 1 }
                        if TempoRelation.factor(of: a, relativeTo: b, factors: [1, 2, 0.5]) != nil { agreeOctave += 1 }
                    }
                    agreements.append(
                        LibraryComparison.Agreement(
                            first: first, second: second, songs: songs, agree: Self.share(agree, of: songs),
                            agreeOctave: Self.share(agreeOctave, of: songs)))
                }
            }
            var accuracy = [LibraryComparison.Accuracy]()
            for name in names {
                var count = 0
                var acc1 = 0
                var acc2 = 0
                var errors = [Double]()
                for (song, bpm) in tempi[name]! {
                    guard let reference = references[song] else { continue }
                    count += 1
                    if TempoRelation.acc1(bpm, reference) { acc1 += 1 }
                    if TempoRelation.acc2(bpm, reference) { acc2 += 1 }
                    if let bpm { errors.append(abs(bpm - reference)) }
                }
                guard count > 0 else { continue }
                accuracy.append(
                    LibraryComparison.Accuracy(
                        detector: name, count: count, acc1: Self.share(acc1, of: count), acc2: Self.share(acc2, of: count),
                        meanAbsoluteError: errors.isEmpty ? nil : errors.reduce(0, +) / Double(errors.count)))
            }
            var histogram = [LibraryComparison.Bin]()
            if let lowest = consensus.first, let highest = consensus.last {
                let first = (lowest / binWidth).rounded(.down)
                let last = (highest / binWidth).rounded(.down)
                var counts = [Int](repeating: 0, count: Int(last - first) + 1)
                for bpm in consensus { counts[Int((bpm / binWidth).rounded(.down) - first)] += 1 }
                histogram = counts.enumerated().map { index, count in
                    LibraryComparison.Bin(lower: (first + Double(index)) * binWidth, width: binWidth, count: count)
                }
            }
            return LibraryComparison(songs: songCount, agreements: agreements, accuracy: accuracy, histogram: histogram)
        }
    }

    private static func share(_ part: Int, of whole: Int) -> Double {
        whole == 0 ? 0 : Double(part) / Double(whole)
    }
}
