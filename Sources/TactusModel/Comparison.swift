import TactusDetector

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

        /// Every field.
        public init(
            label: String, detector: String, preset: String, version: String, status: AnalysisStatus, bpm: Double?, confidence: Double,
            candidates: [TempoCandidate], seconds: Double, worker: String?, failure: AnalysisFailure?, relation: ReferenceRelation?
        ) {
            self.label = label
            self.detector = detector
            self.preset = preset
            self.version = version
            self.status = status
            self.bpm = bpm
            self.confidence = confidence
            self.candidates = candidates
            self.seconds = seconds
            self.worker = worker
            self.failure = failure
            self.relation = relation
        }

        enum CodingKeys: String, CodingKey {
            case label, detector, preset, version, status, bpm, confidence, candidates, seconds, worker, failure, relation
        }
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

    /// Every field.
    public init(
        song: SongID, file: String, title: String?, artist: String?, durationS: Double, reference: ReferenceTempo?,
        consensus: ConsensusTempo, consensusRelation: ReferenceRelation?, results: [Result]
    ) {
        self.song = song
        self.file = file
        self.title = title
        self.artist = artist
        self.durationS = durationS
        self.reference = reference
        self.consensus = consensus
        self.consensusRelation = consensusRelation
        self.results = results
    }

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

        /// Every field.
        public init(first: String, second: String, songs: Int, agree: Double, agreeOctave: Double) {
            self.first = first
            self.second = second
            self.songs = songs
            self.agree = agree
            self.agreeOctave = agreeOctave
        }

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

        /// Every field.
        public init(detector: String, count: Int, acc1: Double, acc2: Double, meanAbsoluteError: Double?) {
            self.detector = detector
            self.count = count
            self.acc1 = acc1
            self.acc2 = acc2
            self.meanAbsoluteError = meanAbsoluteError
        }

        enum CodingKeys: String, CodingKey {
            case detector, count, acc1, acc2, meanAbsoluteError = "mae"
        }
    }

    /// A bin of the consensus-tempo histogram: songs with `lower <= bpm < lower + width`.
    public struct Bin: Sendable, Hashable, Codable {
        public var lower: Double
        public var width: Double
        public var count: Int

        /// Every field.
        public init(lower: Double, width: Double, count: Int) {
            self.lower = lower
            self.width = width
            self.count = count
        }

        enum CodingKeys: String, CodingKey {
            case lower, width, count
        }
    }

    /// One detector's current tempo for a song (nil: analysed, no tempo found).
    public struct DetectorTempo: Sendable, Hashable, Codable {
        public var detector: String
        public var bpm: Double?

        /// Every field.
        public init(detector: String, bpm: Double?) {
            self.detector = detector
            self.bpm = bpm
        }

        enum CodingKeys: String, CodingKey {
            case detector, bpm
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(detector, forKey: .detector)
            try container.encode(bpm, forKey: .bpm)  // null when no tempo, never omitted
        }
    }

    /// A song whose tempo a person should check: its current default analyses disagree with
    /// the consensus, or the consensus is not confident.
    public struct SongToCheck: Sendable, Hashable, Codable {
        public var song: SongID
        public var file: String
        public var consensus: ConsensusTempo
        /// The current default analyses, by detector name.
        public var tempi: [DetectorTempo]
        /// `disagree` (a detector's tempo is more than 4 % from the consensus) and/or
        /// `low-confidence` (the consensus confidence is under ``LibraryComparison/lowConfidence``
        /// or the song has no consensus tempo).
        public var reasons: [String]

        /// Every field.
        public init(song: SongID, file: String, consensus: ConsensusTempo, tempi: [DetectorTempo], reasons: [String]) {
            self.song = song
            self.file = file
            self.consensus = consensus
            self.tempi = tempi
            self.reasons = reasons
        }

        enum CodingKeys: String, CodingKey {
            case song, file, consensus, tempi, reasons
        }
    }

    /// How the BPM tags read from the files (reference tempi of source `tag`) agree with the
    /// detectors, and the tags that look wrong.
    public struct TagAgreement: Sendable, Hashable, Codable {
        /// One detector's tempi against the tags.
        public struct Detector: Sendable, Hashable, Codable {
            public var detector: String
            /// Tagged songs the detector analysed.
            public var songs: Int
            /// Shares of those within 4 % of the tag, at an octave of it (2 or 1/2), at three
            /// times or a third, and none of these (or no tempo found).
            public var match: Double
            public var octave: Double
            public var triple: Double
            public var unrelated: Double

            /// Every field.
            public init(detector: String, songs: Int, match: Double, octave: Double, triple: Double, unrelated: Double) {
                self.detector = detector
                self.songs = songs
                self.match = match
                self.octave = octave
                self.triple = triple
                self.unrelated = unrelated
            }

            enum CodingKeys: String, CodingKey {
                case detector, songs, match, octave, triple, unrelated
            }
        }

        /// A tag that disagrees with the consensus of the detectors.
        public struct Suspect: Sendable, Hashable, Codable {
            public var song: SongID
            public var file: String
            /// The tag's tempo.
            public var tag: Double
            public var consensus: ConsensusTempo
            /// `octave` (the consensus is within 4 % of double or half the tag), `triple` or
            /// `unrelated`.
            public var looks: String

            /// Every field.
            public init(song: SongID, file: String, tag: Double, consensus: ConsensusTempo, looks: String) {
                self.song = song
                self.file = file
                self.tag = tag
                self.consensus = consensus
                self.looks = looks
            }

            enum CodingKeys: String, CodingKey {
                case song, file, tag, consensus, looks
            }
        }

        /// Songs whose reference tempo comes from their tag.
        public var songs: Int
        /// The current default analyses of each detector, and the consensus (`consensus`).
        public var detectors: [Detector]
        /// The tags that disagree with a consensus tempo, the most confident consensus first
        /// (at most ``LibraryComparison/toCheckLimit``).
        public var suspects: [Suspect]
        /// How many tags disagree in all.
        public var suspectsTotal: Int

        /// Every field.
        public init(songs: Int, detectors: [Detector], suspects: [Suspect], suspectsTotal: Int) {
            self.songs = songs
            self.detectors = detectors
            self.suspects = suspects
            self.suspectsTotal = suspectsTotal
        }

        enum CodingKeys: String, CodingKey {
            case songs, detectors, suspects, suspectsTotal = "suspects_total"
        }
    }

    /// Consensus confidences under this are low: on the shared corpora, fewer than about two in
    /// three such songs have the right tempo (`tactus-bench accuracy` prints the calibration).
    public static let lowConfidence = 0.25
    /// At most this many songs to check are listed (the least confident first).
    public static let toCheckLimit = 100

    public var songs: Int
    /// Every pair of detectors (labels as in ``AnalysisRecord/label``; older versions as
    /// `label@version`), sorted by name.
    public var agreements: [Agreement]
    /// Every detector with at least one analysed song that has a reference tempo.
    public var accuracy: [Accuracy]
    /// The consensus tempi of the library, from the lowest bin to the highest, empty bins included.
    public var histogram: [Bin]
    /// The songs to check, least confident first (at most ``toCheckLimit``).
    public var toCheck: [SongToCheck]
    /// How many songs there are to check in all.
    public var toCheckTotal: Int
    /// How the files' BPM tags agree with the detectors; nil when no song has a tag reference.
    public var tags: TagAgreement?

    /// Every field.
    public init(
        songs: Int, agreements: [Agreement], accuracy: [Accuracy], histogram: [Bin], toCheck: [SongToCheck] = [],
        toCheckTotal: Int = 0, tags: TagAgreement? = nil
    ) {
        self.tags = tags
        self.songs = songs
        self.agreements = agreements
        self.accuracy = accuracy
        self.histogram = histogram
        self.toCheck = toCheck
        self.toCheckTotal = toCheckTotal
    }

    enum CodingKeys: String, CodingKey {
        case songs, agreements, accuracy, histogram, toCheck = "to_check", toCheckTotal = "to_check_total", tags
    }
}
