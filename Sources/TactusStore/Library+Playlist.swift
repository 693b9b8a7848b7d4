import TactusModel

extension Library {
    /// A playlist following a cadence profile: for each segment, songs whose tempo (or half
    /// or double it) lies within the tolerance of the cadence, closest first, until the
    /// segment's duration is reached. A song appears at most once in the whole playlist;
    /// songs of unknown (zero) duration are left out.
    public func playlist(_ request: PlaylistRequest) throws(StoreError) -> Playlist {
        try request.profile.validate()
        guard request.tolerance.isFinite, request.tolerance > 0, request.tolerance < 0.5 else {
            throw .invalidValue(field: "tolerance", value: "\(request.tolerance)", accepted: "a fraction in (0, 0.5)")
        }
        var used = Set<SongID>()
        var entries = [Playlist.Entry]()
        var fills = [Playlist.Fill]()
        var clock = 0.0
        for segment in request.profile.segments {
            let range = segment.cadence * (1 - request.tolerance)...segment.cadence * (1 + request.tolerance)
            try Self.checkBPM(range.upperBound, field: "cadence + tolerance")
            try Self.checkBPM(range.lowerBound, field: "cadence - tolerance")
            let candidates = try query(TempoQuery(range: range, source: request.source, octave: true))
            var filled = 0.0
            for match in candidates where filled < segment.durationS && match.durationS > 0 && !used.contains(match.song) {
                used.insert(match.song)
                entries.append(
                    Playlist.Entry(position: entries.count + 1, startS: clock, cadence: segment.cadence, match: match))
                filled += match.durationS
                clock += match.durationS
            }
            fills.append(Playlist.Fill(segment: segment, filledS: filled, isShort: filled < segment.durationS))
        }
        return Playlist(entries: entries, fills: fills)
    }
}
