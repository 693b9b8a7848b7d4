import Foundation
import TactusAudio

/// A playlist rendered as one continuous WAV file: each song stretched to its segment's tempo
/// (``TimeStretcher``), consecutive songs joined by an equal-power crossfade.
///
/// Crossfades are placed by time, at the end of each song, not on beats: the analyses give a
/// song's tempo, not where its beats fall. Songs are decoded and stretched one at a time and
/// written as they are done, so memory holds one song, not the workout.
public enum WorkoutRender {
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

        enum CodingKeys: String, CodingKey {
            case file, start = "start_s", duration = "duration_s", sourceBPM = "source_bpm", targetBPM = "target_bpm"
            case tempoRatio = "tempo_ratio"
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
    /// seconds between songs (less when a song is shorter than twice that).
    public static func render(
        _ pieces: [Piece], to output: String, crossfade: Double = 2, engine: TimeStretcher.Engine = .faster
    ) throws(StretchError) -> Rendered {
        let start = Date()
        var writer: WAVWriter?
        var rate = 0
        var tail: [Float] = []  // the end of the previous song, waiting for the next one's fade-in
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
                writer = try WAVWriter(path: output, sampleRate: rate)
            }
            guard let writer else { break }
            let ratio = piece.targetBPM / piece.sourceBPM
            var song = TimeStretcher.stretch(
                decoded.samples, sampleRate: decoded.metadata.sampleRate, tempoRatio: ratio, outputRate: rate, engine: engine)
            let fade = min(Int(crossfade * Double(rate)), song.count / 2, tail.isEmpty ? 0 : tail.count)
            let songStart = writer.frames + tail.count - fade
            // Equal power: the outgoing song's gain is cos, the incoming one's sin, over the overlap.
            for index in 0..<fade {
                let angle = Double.pi / 2 * (Double(index) + 0.5) / Double(fade)
                song[index] = song[index] * Float(sin(angle)) + tail[tail.count - fade + index] * Float(cos(angle))
            }
            try writer.write(tail[0..<(tail.count - fade)])
            let keep = min(Int(crossfade * Double(rate)), song.count / 2)
            try writer.write(song[0..<(song.count - keep)])
            tail = Array(song[(song.count - keep)...])
            rendered.append(RenderedPiece(
                file: piece.file, start: Double(songStart) / Double(rate), duration: Double(song.count) / Double(rate),
                sourceBPM: piece.sourceBPM, targetBPM: piece.targetBPM, tempoRatio: ratio))
        }
        guard let writer else { throw .cannotWrite(path: output, reason: "no song to render") }
        try writer.write(tail[...])
        try writer.close()
        return Rendered(
            output: output, sampleRate: rate, seconds: Double(writer.frames) / Double(rate),
            renderSeconds: Date().timeIntervalSince(start), pieces: rendered)
    }
}
