import TactusModel

extension Library {
    /// A playlist following a cadence profile, each segment starting when the profile says.
    ///
    /// Each segment ends at its time on the profile's clock (the sum of the durations before
    /// it and its own), whatever the segments before it got. Its songs are those whose tempo
    /// (or half or double it) lies within the tolerance of the cadence, closest first, each
    /// taken when it ends by the segment's end; then, if time is left, the one song whose end
    /// lands nearest the segment's end, when that is nearer than stopping. Whole songs never
    /// land exactly, so a segment ends within about half a song of its time, and the next one
    /// aims at its own end again: the errors never add up. Unless `strict`, a segment whose
    /// fitting songs run out is filled the same way from the songs nearest its cadence beyond
    /// the tolerance (except those that fit a later segment, kept for it); each entry says how
    /// far it is from its cadence, each fill how far its songs are. A song appears at most once in the whole playlist; songs of unknown (zero)
    /// duration are left out.
    public func playlist(_ request: PlaylistRequest) throws(StoreError) -> Playlist {
        try request.profile.validate()
        guard request.tolerance.isFinite, request.tolerance > 0, request.tolerance < 0.5 else {
            throw .invalidValue(field: "tolerance", value: "\(request.tolerance)", accepted: "a fraction in (0, 0.5)")
        }
        var builder = PlaylistBuilder(tolerance: request.tolerance)
        var everySong: [TempoMatch]?
        for (index, segment) in request.profile.segments.enumerated() {
            let range = segment.cadence * (1 - request.tolerance)...segment.cadence * (1 + request.tolerance)
            // Named for the request: the segment's cadence, widened by the tolerance, must stay a tempo.
            try Self.checkBPM(range.upperBound, field: "profile: cadence \(segment.cadence) + tolerance \(request.tolerance)")
            try Self.checkBPM(range.lowerBound, field: "profile: cadence \(segment.cadence) - tolerance \(request.tolerance)")
            builder.begin(segment)
            var exhausted = builder.take(try query(TempoQuery(range: range, source: request.source, octave: true)))
            if exhausted && !request.strict && builder.isBehind {
                if everySong == nil { everySong = try query(TempoQuery(range: TempoQuery.acceptedBPM, source: request.source)) }
                // A song that fits a later segment is kept for it.
                let later = request.profile.segments[(index + 1)...].map(\.cadence)
                let spare = (everySong ?? []).filter { song in !later.contains { builder.fits(song.bpm, cadence: $0) } }
                exhausted = builder.take(PlaylistBuilder.nearest(spare, to: segment.cadence))
            }
            builder.end(exhausted: exhausted)
        }
        return Playlist(entries: builder.entries, fills: builder.fills)
    }
}

/// The state of a playlist being built segment by segment: the songs used, the entries, and
/// the clock of the run (where the songs so far end) against the profile's clock.
struct PlaylistBuilder {
    let tolerance: Double
    private(set) var entries = [Playlist.Entry]()
    private(set) var fills = [Playlist.Fill]()
    private var used = Set<SongID>()
    /// When the next song starts.
    private var clock = 0.0
    /// When the current segment starts and ends on the profile's clock.
    private var plannedStart = 0.0
    private var plannedEnd = 0.0
    private var segment = CadenceProfile.Segment(cadence: 1, durationS: 1)
    private var segmentStart = 0.0
    private var firstEntry = 0

    init(tolerance: Double) {
        self.tolerance = tolerance
    }

    /// Whether a song at `bpm`, or at half or double it, is within the tolerance of `cadence`.
    func fits(_ bpm: Double, cadence: Double) -> Bool {
        [1.0, 0.5, 2].contains { abs(bpm / $0 - cadence) <= cadence * tolerance }
    }

    /// Whether the songs so far end before the current segment's end.
    var isBehind: Bool { clock < plannedEnd }

    mutating func begin(_ segment: CadenceProfile.Segment) {
        self.segment = segment
        plannedStart = plannedEnd
        plannedEnd += segment.durationS
        segmentStart = clock
        firstEntry = entries.count
    }

    /// Takes from `candidates` (best first) every unused song that ends by the segment's end,
    /// then the one whose end lands nearest it when that is nearer than stopping. Returns
    /// whether the candidates ran out with the segment still short of its end.
    mutating func take(_ candidates: [TempoMatch]) -> Bool {
        var left = [TempoMatch]()
        for match in candidates where match.durationS > 0 && !used.contains(match.song) {
            if clock + match.durationS <= plannedEnd {
                add(match)
            } else {
                left.append(match)
            }
        }
        guard isBehind else { return false }
        let gap = plannedEnd - clock
        // The first of the nearest landings: candidates come best first.
        if let best = left.min(by: { abs(clock + $0.durationS - plannedEnd) < abs(clock + $1.durationS - plannedEnd) }),
            abs(clock + best.durationS - plannedEnd) < gap
        {
            add(best)
            return false
        }
        return left.isEmpty
    }

    private mutating func add(_ match: TempoMatch) {
        used.insert(match.song)
        let off = (match.matchedBPM - segment.cadence) / segment.cadence
        entries.append(
            Playlist.Entry(
                position: entries.count + 1, startS: clock, cadence: segment.cadence, match: match,
                offPct: off * 100, fits: abs(off) <= tolerance * (1 + 1e-9)))
        clock += match.durationS
    }

    mutating func end(exhausted: Bool) {
        let songs = entries[firstEntry...]
        let offs = songs.map { abs($0.offPct) }
        fills.append(
            Playlist.Fill(
                segment: segment, filledS: clock - segmentStart, isShort: exhausted && isBehind, startS: segmentStart,
                plannedStartS: plannedStart, beyondToleranceS: songs.filter { !$0.fits }.reduce(0) { $0 + $1.match.durationS },
                meanOffPct: offs.isEmpty ? nil : offs.reduce(0, +) / Double(offs.count), maxOffPct: offs.max()))
    }

    /// Every song as a match for `cadence` at the factor (1, 1/2 or 2) that brings its tempo
    /// nearest it, nearest first (ties: the library's order).
    static func nearest(_ songs: [TempoMatch], to cadence: Double) -> [TempoMatch] {
        songs.map { song in
            var match = song
            match.factor = [1.0, 0.5, 2].min { abs(song.bpm / $0 - cadence) < abs(song.bpm / $1 - cadence) } ?? 1
            return match
        }
        .enumerated()
        .sorted { a, b in
            let (x, y) = (abs(a.element.matchedBPM - cadence), abs(b.element.matchedBPM - cadence))
            return x != y ? x < y : a.offset < b.offset
        }
        .map(\.element)
    }
}
