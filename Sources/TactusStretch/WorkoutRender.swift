import Foundation
import TactusAudio

/// A playlist rendered as one continuous WAV file: each song stretched to its segment's tempo
/// (``TimeStretcher``), consecutive songs joined by an equal-power crossfade.
///
/// With ``CrossfadePlacement/onBeats`` (the default) each crossfade starts on a beat of the
/// outgoing song and the incoming song's first beat is laid on it, so the beats of both stay on
/// one grid through the join: a song's beats are found in its stretched audio at its target tempo
/// (``BeatPhase``), the outgoing song's end after the crossfade (less than a beat) and the incoming
/// song's start before its first beat are dropped. A join where either song has no clear beat is
/// placed by time, at the end of the outgoing song. Songs are decoded and stretched one at a time
/// and written as they are done, so memory holds one song, not the workout.
public enum WorkoutRender {
    /// Where crossfades between songs are placed.
    public enum CrossfadePlacement: Sendable, Hashable {
        /// On a beat of the outgoing song, the incoming song's first beat laid on it; by time
        /// where either song has no clear beat.
        case onBeats
        /// At the end of the outgoing song, whatever its beats.
        case byTime
    }

    /// One song of the workout.
    public struct Piece: Sendable, Hashable {
        /// The song's audio file.
        public var file: String
        /// The song's tempo at the octave that serves the segment (its tempo / the match's factor).
        public var sourceBPM: Double
        /// The segment's cadence: the tempo to play the song at.
        public var targetBPM: Double

        public init(file: String, sourceBPM: Double, targetBPM: Double) {
            self.file = file
            self.sourceBPM = sourceBPM
            self.targetBPM = targetBPM
        }
    }

    /// Where a song landed in the rendered file.
    public struct RenderedPiece: Sendable, Hashable, Codable {
        public var file: String
        /// Seconds from the start of the rendered file (the start of its fade-in).
        public var start: Double
        public var duration: Double
        public var sourceBPM: Double
        public var targetBPM: Double
        public var tempoRatio: Double
        /// Whether the crossfade into this song was placed on beats (false for the first song and
        /// for joins placed by time).
        public var joinedOnBeat: Bool

        enum CodingKeys: String, CodingKey {
            case file, start = "start_s", duration = "duration_s", sourceBPM = "source_bpm", targetBPM = "target_bpm"
            case tempoRatio = "tempo_ratio", joinedOnBeat = "joined_on_beat"
        }
    }

    /// What was written.
    public struct Rendered: Sendable, Hashable, Codable {
        public var output: String
        public var sampleRate: Int
        public var seconds: Double
        /// Seconds spent decoding, stretching and writing.
        public var renderSeconds: Double
        public var pieces: [RenderedPiece]

        enum CodingKeys: String, CodingKey {
            case output, sampleRate = "sample_rate", seconds = "duration_s", renderSeconds = "render_s", pieces
        }
    }

    /// Renders `pieces` into `output` at the first song's sample rate, crossfading `crossfade`
    /// seconds between songs (less when a song is shorter than twice that), placed by
    /// `placement`, and puts the file in place.
    public static func render(
        _ pieces: [Piece], to output: OutputFile, crossfade: Double = 2, placement: CrossfadePlacement = .onBeats,
        engine: TimeStretcher.Engine = .faster
    ) throws(StretchError) -> Rendered {
        let start = Date()
        var writer: WAVWriter?
        var rate = 0
        // The end of the previous song, waiting for the next one's fade-in, and a beat of it
        // (samples from the start of `tail`, at `tailPeriod` samples per beat) when it has a clear one.
        var tail: [Float] = []
        var tailBeat: Double?
        var tailPeriod = 0.0
        var rendered: [RenderedPiece] = []
        for piece in pieces {
            let decoded: DecodedAudio
            do throws(AudioError) {
                decoded = try DecodedAudio(decoding: .file(piece.file))
            } catch {
                throw .unreadable(file: piece.file, message: error.description)
            }
            if writer == nil {
                rate = decoded.metadata.sampleRate
                writer = try WAVWriter(into: output, sampleRate: rate)
            }
            guard let writer else { break }
            let ratio = piece.targetBPM / piece.sourceBPM
            var song = TimeStretcher.stretch(
                decoded.samples, sampleRate: decoded.metadata.sampleRate, tempoRatio: ratio, outputRate: rate, engine: engine)
            let period = Double(rate) * 60 / piece.targetBPM
            let crossfadeSamples = Int(crossfade * Double(rate))
            let fade = min(crossfadeSamples, song.count / 2, tail.isEmpty ? 0 : tail.count)
            let join = placement == .onBeats && fade > 0
                ? beatJoin(tail: tail.count, beat: tailBeat, period: tailPeriod, song: song, fade: fade, rate: rate, bpm: piece.targetBPM)
                : nil
            let cut = join?.cut ?? tail.count - fade  // where in the tail the crossfade starts
            if let join { song.removeFirst(join.skip) }
            if let last = rendered.indices.last {
                rendered[last].duration -= Double(tail.count - cut - fade) / Double(rate)
            }
            let songStart = writer.frames + cut
            // Equal power: the outgoing song's gain is cos, the incoming one's sin, over the overlap.
            for index in 0..<fade {
                let angle = Double.pi / 2 * (Double(index) + 0.5) / Double(fade)
                song[index] = song[index] * Float(sin(angle)) + tail[cut + index] * Float(cos(angle))
            }
            try writer.write(tail[0..<cut])
            // Kept for the next crossfade: its length and a beat more, to find a beat to start it on.
            let keep = min(crossfadeSamples + Int(period.rounded(.up)), song.count / 2)
            try writer.write(song[0..<(song.count - keep)])
            tail = Array(song[(song.count - keep)...])
            tailPeriod = period
            tailBeat = placement == .onBeats
                ? lastBeat(of: song, sampleRate: rate, bpm: piece.targetBPM).map { $0 - Double(song.count - keep) }
                : nil
            rendered.append(RenderedPiece(
                file: piece.file, start: Double(songStart) / Double(rate), duration: Double(song.count) / Double(rate),
                sourceBPM: piece.sourceBPM, targetBPM: piece.targetBPM, tempoRatio: ratio, joinedOnBeat: join != nil))
        }
        guard let writer else { throw .cannotWrite(path: output.path, reason: "no song to render") }
        try writer.write(tail[...])
        try writer.close()
        try output.place()
        return Rendered(
            output: output.path, sampleRate: rate, seconds: Double(writer.frames) / Double(rate),
            renderSeconds: Date().timeIntervalSince(start), pieces: rendered)
    }

    /// Seconds of a song's start and end searched for its beats.
    private static let beatSearchSeconds = 12.0

    /// Where a crossfade of `fade` samples goes on beats: `cut`, the last beat of the outgoing song
    /// (`beat` and `period`, samples from the start of its `tail` of that many samples) where the
    /// crossfade still fits in the tail, and `skip`, the samples of `song` before its first beat.
    /// Nil when either song has no clear beat or the incoming song is too short after its first beat.
    private static func beatJoin(
        tail: Int, beat: Double?, period: Double, song: [Float], fade: Int, rate: Int, bpm: Double
    ) -> (cut: Int, skip: Int)? {
        guard let beat, period > 0 else { return nil }
        let head = song[0..<min(song.count, Int(beatSearchSeconds * Double(rate)))]
        guard let first = BeatPhase.first(in: head, sampleRate: rate, bpm: bpm) else { return nil }
        let skip = Int((first * Double(rate)).rounded())
        let cut = Int((beat + ((Double(tail - fade) - beat) / period).rounded(.down) * period).rounded())
        guard cut >= 0, cut + fade <= tail, song.count - skip >= 2 * fade else { return nil }
        return (cut, skip)
    }

    /// The position (in samples) of a beat of `song` at `bpm`, found in its final seconds, or nil
    /// when they have no clear beat.
    private static func lastBeat(of song: [Float], sampleRate: Int, bpm: Double) -> Double? {
        let from = max(0, song.count - Int(beatSearchSeconds * Double(sampleRate)))
        guard let first = BeatPhase.first(in: song[from...], sampleRate: sampleRate, bpm: bpm) else { return nil }
        return Double(from) + first * Double(sampleRate)
    }
}
