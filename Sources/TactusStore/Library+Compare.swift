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
    /// the reference tempi, the histogram of consensus tempi in bins of `binWidth` BPM, and the
    /// songs whose tempo a person should check.
    ///
    /// Each label (`detector` or `detector/preset`) stands for the newest version of that
    /// detector the library holds; the analyses of older versions count under
    /// `detector@version` (`comb-filter@1.0.0`), so a library re-analysed after a detector
    /// changed compares old against new. When a song has several analyses under one label,
    /// the most recent counts.
    public func compareLibrary(binWidth: Double = 10) throws(StoreError) -> LibraryComparison {
        // A width of 10^-300 BPM would ask for more bins than there is memory.
        guard binWidth.isFinite, TempoHistogram.binWidths.contains(binWidth) else {
            throw .invalidValue(field: "bin_width", value: "\(binWidth)", accepted: "a width of 0.1 to 1000 BPM")
        }
        return try read { db in
            struct Analysed {
                var song: Int64
                var base: String
                var version: String
                var bpm: Double?
                var date: Date
            }
            var analysed = [Analysed]()
            var bases = [String: String]()  // detector + params_hash -> detector or detector/preset
            let rows = try Row.fetchCursor(
                db,
                sql: """
                    SELECT song_id, detector, detector_version, params_hash, params_json, bpm, analyzed_at FROM analyses
                    WHERE status <> 'failed'
                    """)
            while let row = try rows.next() {
                let detector: String = row["detector"]
                let baseKey = detector + "\u{0}" + (row["params_hash"] as String)
                let base: String
                if let known = bases[baseKey] {
                    base = known
                } else {
                    let params = (try? JSONDecoder().decode(ParameterSet.self, from: Data((row["params_json"] as String).utf8)))
                    let preset: String
                    if case .text(let named)? = params?["preset"] { preset = named } else { preset = "default" }
                    base = preset == "default" ? detector : "\(detector)/\(preset)"
                    bases[baseKey] = base
                }
                analysed.append(
                    Analysed(song: row["song_id"], base: base, version: row["detector_version"], bpm: row["bpm"], date: row.storedDate("analyzed_at")))
            }
            var newest = [String: String]()
            for entry in analysed where newest[entry.base].map({ Self.isNewer(entry.version, than: $0) }) ?? true {
                newest[entry.base] = entry.version
            }
            // The tempo (nil: analysed, none found) of each (label, song).
            var tempi = [String: [Int64: Double?]]()
            var dates = [String: [Int64: Date]]()
            for entry in analysed {
                let label = entry.version == newest[entry.base] ? entry.base : "\(entry.base)@\(entry.version)"
                if let previous = dates[label]?[entry.song], previous > entry.date { continue }
                dates[label, default: [:]][entry.song] = entry.date
                tempi[label, default: [:]][entry.song] = .some(entry.bpm)
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
            // The consensus, measured as the detectors are: last, under the label `consensus`.
            let consensusOfReferenced = try Row.fetchAll(
                db, sql: "SELECT c.song_id, c.bpm FROM consensus c JOIN reference_tempi r ON r.song_id = c.song_id"
            ).map { ($0[0] as Int64, $0[1] as Double?) }
            if !consensusOfReferenced.isEmpty {
                var acc1 = 0
                var acc2 = 0
                var errors = [Double]()
                for (song, bpm) in consensusOfReferenced {
                    guard let reference = references[song] else { continue }
                    if TempoRelation.acc1(bpm, reference) { acc1 += 1 }
                    if TempoRelation.acc2(bpm, reference) { acc2 += 1 }
                    if let bpm { errors.append(abs(bpm - reference)) }
                }
                let count = consensusOfReferenced.count
                accuracy.append(
                    LibraryComparison.Accuracy(
                        detector: "consensus", count: count, acc1: Self.share(acc1, of: count), acc2: Self.share(acc2, of: count),
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
            let current = names.filter { !$0.contains("/") && !$0.contains("@") }
            let toCheck = try Self.songsToCheck(current.map { ($0, tempi[$0]!) }, db)
            return LibraryComparison(
                songs: songCount, agreements: agreements, accuracy: accuracy, histogram: histogram,
                toCheck: Array(toCheck.prefix(LibraryComparison.toCheckLimit)), toCheckTotal: toCheck.count,
                tags: try Self.tagAgreement(current.map { ($0, tempi[$0]!) }, db))
        }
    }

    /// The songs whose current default analyses disagree with the consensus (a detector's tempo
    /// more than 4 % from it) or whose consensus confidence is under
    /// ``LibraryComparison/lowConfidence``, least confident first.
    private static func songsToCheck(_ detectors: [(label: String, tempi: [Int64: Double?])], _ db: Database) throws
        -> [LibraryComparison.SongToCheck]
    {
        var found = [(confidence: Double, entry: LibraryComparison.SongToCheck)]()
        let rows = try Row.fetchCursor(
            db,
            sql: """
                SELECT c.song_id, s.sha256, s.file_name, c.bpm, c.detectors, c.confidence
                FROM consensus c JOIN songs s ON s.id = c.song_id
                """)
        while let row = try rows.next() {
            let key: Int64 = row[0]
            let consensus = ConsensusTempo(bpm: row[3], detectors: NamesJSON.decode(row[4]), confidence: row[5])
            let tempi = detectors.compactMap { detector in
                detector.tempi[key].map { LibraryComparison.DetectorTempo(detector: detector.label, bpm: $0) }
            }
            guard !tempi.isEmpty, let song = SongID(row[1] as String) else { continue }
            var reasons = [String]()
            if let bpm = consensus.bpm, tempi.contains(where: { $0.bpm.map { !TempoRelation.matches($0, bpm) } ?? false }) {
                reasons.append("disagree")
            }
            if (consensus.confidence ?? 1) < LibraryComparison.lowConfidence || consensus.bpm == nil {
                reasons.append("low-confidence")
            }
            guard !reasons.isEmpty else { continue }
            found.append(
                (consensus.confidence ?? 0,
                 LibraryComparison.SongToCheck(song: song, file: row[2], consensus: consensus, tempi: tempi, reasons: reasons)))
        }
        return found.sorted { $0.confidence != $1.confidence ? $0.confidence < $1.confidence : $0.entry.song < $1.entry.song }
            .map(\.entry)
    }

    /// How the tag references agree with each current default analysis and with the consensus,
    /// and the tags whose consensus says otherwise; nil when no song has a tag reference.
    private static func tagAgreement(_ detectors: [(label: String, tempi: [Int64: Double?])], _ db: Database) throws
        -> LibraryComparison.TagAgreement?
    {
        let rows = try Row.fetchAll(
            db,
            sql: """
                SELECT r.song_id, r.bpm AS tag, s.sha256, s.file_name, c.bpm, c.detectors, c.confidence
                FROM reference_tempi r JOIN songs s ON s.id = r.song_id LEFT JOIN consensus c ON c.song_id = r.song_id
                WHERE r.source = 'tag'
                """)
        guard !rows.isEmpty else { return nil }
        var consensus = [Int64: Double?]()
        var suspects = [LibraryComparison.TagAgreement.Suspect]()
        for row in rows {
            let key: Int64 = row["song_id"], tag: Double = row["tag"]
            guard let detectorsJSON = row["detectors"] as String? else { continue }  // not analysed yet
            let tempo = ConsensusTempo(bpm: row["bpm"], detectors: NamesJSON.decode(detectorsJSON), confidence: row["confidence"])
            consensus[key] = .some(tempo.bpm)
            guard let bpm = tempo.bpm, let song = SongID(row["sha256"] as String) else { continue }
            let relation = ReferenceRelation(bpm: bpm, reference: tag)
            guard relation != .match else { continue }
            let looks = switch relation {
            case .octave: "octave"
            case .triple: "triple"
            default: "unrelated"
            }
            suspects.append(.init(song: song, file: row["file_name"], tag: tag, consensus: tempo, looks: looks))
        }
        let tags = Dictionary(rows.map { ($0["song_id"] as Int64, $0["tag"] as Double) }, uniquingKeysWith: { first, _ in first })
        let agreement = (detectors + [("consensus", consensus)]).compactMap { label, tempi -> LibraryComparison.TagAgreement.Detector? in
            var counts = [ReferenceRelation: Int]()
            var songs = 0
            for (song, tag) in tags {
                guard let bpm = tempi[song] else { continue }
                songs += 1
                counts[ReferenceRelation(bpm: bpm, reference: tag), default: 0] += 1
            }
            guard songs > 0 else { return nil }
            return .init(
                detector: label, songs: songs, match: share(counts[.match] ?? 0, of: songs), octave: share(counts[.octave] ?? 0, of: songs),
                triple: share(counts[.triple] ?? 0, of: songs), unrelated: share(counts[.wrong] ?? 0, of: songs))
        }
        suspects.sort {
            let (a, b) = ($0.consensus.confidence ?? 0, $1.consensus.confidence ?? 0)
            return a != b ? a > b : $0.song < $1.song
        }
        return LibraryComparison.TagAgreement(
            songs: rows.count, detectors: agreement, suspects: Array(suspects.prefix(LibraryComparison.toCheckLimit)),
            suspectsTotal: suspects.count)
    }

    /// Whether version `candidate` is newer than `other`: numeric components compared in order
    /// (`1.10.0` is newer than `1.9.2`), text where a component is not a number.
    static func isNewer(_ candidate: String, than other: String) -> Bool {
        let a = candidate.split(separator: "."), b = other.split(separator: ".")
        for (x, y) in zip(a, b) where x != y {
            if let i = Int(x), let j = Int(y) { return i > j }
            return x > y
        }
        return a.count > b.count
    }

    private static func share(_ part: Int, of whole: Int) -> Double {
        whole == 0 ? 0 : Double(part) / Double(whole)
    }
}
