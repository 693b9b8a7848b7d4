import Foundation
import GRDB
import TactusDetector
import TactusModel

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
