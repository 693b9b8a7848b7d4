import Foundation

/// Step cadences over time, for a run: `10m@150,5m@170,10m@160` is 10 minutes at 150 steps
/// per minute, then 5 at 170, then 10 at 160.
public struct CadenceProfile: Sendable, Hashable, CustomStringConvertible {
    /// A stretch of the run at one cadence.
    public struct Segment: Sendable, Hashable, Codable {
        /// Steps per minute.
        public var cadence: Double
        public var durationS: Double

        public init(cadence: Double, durationS: Double) {
            self.cadence = cadence
            self.durationS = durationS
        }

        enum CodingKeys: String, CodingKey {
            case cadence, durationS = "duration_s"
        }
    }

    public var segments: [Segment]

    public init(segments: [Segment]) {
        self.segments = segments
    }

    /// One cadence for the whole run.
    public static func constant(cadence: Double, minutes: Double) -> CadenceProfile {
        CadenceProfile(segments: [Segment(cadence: cadence, durationS: minutes * 60)])
    }

    /// Parses `DURATION@CADENCE[,DURATION@CADENCE...]`, where a duration is a number followed
    /// by `h`, `m` or `s` (minutes when no unit is given): `10m@150,5m@170,90s@160`.
    public init(parsing spec: String) throws(StoreError) {
        var segments = [Segment]()
        for part in spec.split(separator: ",", omittingEmptySubsequences: false) {
            let pieces = part.trimmingCharacters(in: .whitespaces).split(separator: "@", omittingEmptySubsequences: false)
            guard pieces.count == 2 else {
                throw .invalidProfile(spec, reason: "'\(part)' is not DURATION@CADENCE (for example 10m@160)")
            }
            var durationText = pieces[0].trimmingCharacters(in: .whitespaces)
            var unit = 60.0
            if let last = durationText.last, let scale = ["h": 3600.0, "m": 60.0, "s": 1.0][String(last)] {
                unit = scale
                durationText.removeLast()
            }
            guard let amount = DecimalNumber.parse(durationText), amount.isFinite, amount > 0 else {
                throw .invalidProfile(spec, reason: "'\(pieces[0])' is not a duration > 0 (10m, 90s, 1h)")
            }
            guard let cadence = DecimalNumber.parse(pieces[1].trimmingCharacters(in: .whitespaces)) else {
                throw .invalidProfile(spec, reason: "'\(pieces[1])' is not a cadence in steps per minute")
            }
            segments.append(Segment(cadence: cadence, durationS: amount * unit))
        }
        self.segments = segments
        try validate(spec: spec)
    }

    /// The longest run a profile may describe, all segments together: 100,000 minutes, the
    /// most a playlist request's `minutes` may ask (a profile of 10^20 hours is a mistake or an
    /// attack, not a run).
    public static let maxTotalS = 100_000 * 60.0

    /// Checks that there is a segment, that every cadence and duration is in range and that the
    /// segments last at most ``maxTotalS`` together; `spec` is the text the profile was parsed
    /// from, for the message.
    public func validate(spec: String? = nil) throws(StoreError) {
        let name = spec ?? description
        guard !segments.isEmpty else { throw .invalidProfile(name, reason: "no segment") }
        for segment in segments {
            guard segment.cadence.isFinite, TempoQuery.acceptedBPM.contains(segment.cadence) else {
                throw .invalidProfile(name, reason: "cadence \(segment.cadence) is not in 1...1000 steps per minute")
            }
            guard segment.durationS.isFinite, segment.durationS > 0 else {
                throw .invalidProfile(name, reason: "duration \(segment.durationS) s is not > 0")
            }
        }
        guard totalS <= Self.maxTotalS else {
            throw .invalidProfile(
                name, reason: "it lasts \(Self.format(totalS / 60)) minutes, more than the \(Int(Self.maxTotalS / 60)) minutes a profile may")
        }
    }

    public var totalS: Double { segments.reduce(0) { $0 + $1.durationS } }

    public var description: String {
        segments.map { "\(Self.format($0.durationS / 60))m@\(Self.format($0.cadence))" }.joined(separator: ",")
    }

    /// `value` without decimals when it is whole and within `Int`'s range, else as a `Double`
    /// prints.
    private static func format(_ value: Double) -> String {
        abs(value) < 1e15 && value == value.rounded() ? String(Int(value)) : String(value)
    }
}

/// What a cadence playlist is made of.
public struct PlaylistRequest: Sendable, Hashable {
    public var profile: CadenceProfile
    /// Relative: 0.04 accepts songs within 4 % of the cadence (or of half or double it).
    public var tolerance: Double
    public var source: TempoSource
    /// Only songs within the tolerance: a segment whose songs run out stays short. Otherwise
    /// it is filled from the songs nearest its cadence beyond the tolerance, so that every
    /// segment starts when the profile says.
    public var strict: Bool

    public init(profile: CadenceProfile, tolerance: Double = 0.04, source: TempoSource = .consensus, strict: Bool = false) {
        self.profile = profile
        self.tolerance = tolerance
        self.source = source
        self.strict = strict
    }
}

/// Songs to run to, in order.
public struct Playlist: Sendable, Hashable, Codable {
    /// One song of the playlist.
    public struct Entry: Sendable, Hashable, Codable {
        /// From 1.
        public var position: Int
        /// When the song starts, in seconds from the start of the run.
        public var startS: Double
        /// The cadence of the segment the song belongs to.
        public var cadence: Double
        /// The song, its tempo and the factor that relates it to the cadence.
        public var match: TempoMatch
        /// How far the song's matched tempo is from the cadence, in percent (negative: slower).
        public var offPct: Double
        /// Whether the song is within the request's tolerance (false: taken to fill the segment).
        public var fits: Bool

        /// Every field.
        public init(position: Int, startS: Double, cadence: Double, match: TempoMatch, offPct: Double, fits: Bool) {
            self.position = position
            self.startS = startS
            self.cadence = cadence
            self.match = match
            self.offPct = offPct
            self.fits = fits
        }

        enum CodingKeys: String, CodingKey {
            case position, startS = "start_s", cadence, match, offPct = "off_pct", fits
        }
    }

    /// How well a segment of the profile was filled, and how far its songs are from its cadence.
    public struct Fill: Sendable, Hashable, Codable {
        public var segment: CadenceProfile.Segment
        /// Seconds of music chosen for it: within about half a song of the segment's duration
        /// (its first song starts when the segment starts, its last may run past its end).
        public var filledS: Double
        /// True when the library ran out of songs before the segment was full.
        public var isShort: Bool
        /// When the segment's first song starts, in seconds from the start of the run.
        public var startS: Double
        /// When the profile starts the segment: ``startS`` minus this is how far the
        /// segments before it ran over (or, negative, under) their time.
        public var plannedStartS: Double
        /// Seconds of songs beyond the tolerance, taken because the fitting ones ran out.
        public var beyondToleranceS: Double
        /// The mean and the largest distance of the segment's songs from its cadence, in
        /// percent (absolute values; nil without songs).
        public var meanOffPct: Double?
        public var maxOffPct: Double?

        /// Every field.
        public init(
            segment: CadenceProfile.Segment, filledS: Double, isShort: Bool, startS: Double, plannedStartS: Double,
            beyondToleranceS: Double = 0, meanOffPct: Double? = nil, maxOffPct: Double? = nil
        ) {
            self.segment = segment
            self.filledS = filledS
            self.isShort = isShort
            self.startS = startS
            self.plannedStartS = plannedStartS
            self.beyondToleranceS = beyondToleranceS
            self.meanOffPct = meanOffPct
            self.maxOffPct = maxOffPct
        }

        enum CodingKeys: String, CodingKey {
            case segment, filledS = "filled_s", isShort = "short", startS = "start_s", plannedStartS = "planned_start_s"
            case beyondToleranceS = "beyond_tolerance_s", meanOffPct = "mean_off_pct", maxOffPct = "max_off_pct"
        }
    }

    public var entries: [Entry]
    public var fills: [Fill]

    /// True when every segment was filled.
    public var isComplete: Bool { fills.allSatisfy { !$0.isShort } }

    /// Every field.
    public init(entries: [Entry], fills: [Fill]) {
        self.entries = entries
        self.fills = fills
    }

    enum CodingKeys: String, CodingKey {
        case entries, fills
    }
}
