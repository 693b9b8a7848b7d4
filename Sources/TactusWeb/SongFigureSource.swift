import Foundation
import TactusDetector
import TactusModel
import TactusPlot
import TactusProtocol

/// A song as its page shows it: what `compare` holds for it (tags, reference, every
/// detector's result) and its stored analyses with their windows and envelope (`result`),
/// drawn as the song figure of `tactus plot`.
struct SongFigureSource: Sendable {
    let gateway: WebGateway

    struct Figure: Sendable {
        var comparison: SongComparison
        var result: ResultResponse
        /// The figure as an SVG document (with its XML declaration).
        var svg: String
    }

    func figure(song: String) async throws(HTTPFailure) -> Figure {
        let comparison = try await gateway.ask { client in
            guard let found = try client.compare(CompareRequest(song: song)).song else {
                throw ClientErrorReply.notFound(song)
            }
            return found
        }
        let (result, values) = try await gateway.ask { try $0.result(ResultRequest(song: comparison.song, windows: true, envelope: true)) }
        let envelope = result.envelopeHopS.flatMap { hop in values.map { EnergyEnvelope(hopS: hop, values: $0) } }
        let subtitle = [comparison.file, Clock.text(comparison.durationS), "song \(comparison.song.short)"].joined(separator: " · ")
        let plot = SongPlot(
            title: SongPlot.title(title: comparison.title, artist: comparison.artist, file: comparison.file), subtitle: subtitle,
            durationS: comparison.durationS, envelope: envelope, analyses: result.analyses, consensusBPM: result.consensus.bpm,
            referenceBPM: comparison.reference?.bpm, tempoMap: result.consensus.tempoMap, beatGrid: result.beatGrid)
        return Figure(comparison: comparison, result: result, svg: SongFigure(plot).document().render())
    }
}

/// A reply that should have held something and did not.
enum ClientErrorReply: Error {
    case notFound(String)
}

/// Durations as people read them: `3:25`, `1:02:03`.
enum Clock {
    /// `m:ss` or `h:mm:ss`; a dash for a duration that is not one (negative, not finite, or
    /// beyond what an `Int` of seconds holds).
    static func text(_ seconds: Double) -> String {
        guard seconds >= 0, let total = Int(exactly: seconds.rounded()) else { return "–" }
        let (hours, minutes, rest) = (total / 3600, total / 60 % 60, total % 60)
        return hours > 0 ? String(format: "%d:%02d:%02d", hours, minutes, rest) : String(format: "%d:%02d", minutes, rest)
    }
}
