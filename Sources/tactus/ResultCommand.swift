import ArgumentParser
import Foundation
import TactusDetector
import TactusProtocol

/// `tactus result SONG`: a song's stored analyses.
struct ResultCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "result",
        abstract: "Show the stored analyses of a song.",
        discussion: """
            For each detector: BPM, confidence, top candidates and time, then the detectors \
            still pending and the consensus. --windows adds each analysis's windows, \
            --envelope the song's energy envelope (mean squared amplitude per 23.2 ms).

            With --json: one object {song, name?, duration_s?, analyses (as `tactus analyze \
            --json` prints them), pending, consensus, envelope? ({hop_s, values})}.
            """
    )

    @Argument(help: ArgumentHelp("The song id (64 hex digits, as `submit` prints it).", valueName: "song"))
    var song: String

    @Option(name: .customLong("detector"), help: ArgumentHelp(
        "Only this detector's analysis (repeatable; all by default).", valueName: "name"))
    var detectorNames: [String] = []

    @Flag(help: "Include each analysis's windows (start, duration, energy, tempo).")
    var windows = false

    @Flag(help: "Include the song's energy envelope.")
    var envelope = false

    @Flag(help: "Print JSON.")
    var json = false

    @OptionGroup var server: ServerOptions

    func validate() throws {
        guard case .song = try JobOrSong(song) else { throw ValidationError("'\(song)' is a job id; give a song id.") }
    }

    func run() throws {
        let (response, values) = try server.client().result(ResultRequest(
            song: song, detectors: detectorNames.isEmpty ? nil : detectorNames, windows: windows ? true : nil,
            envelope: envelope ? true : nil))
        var energy: EnergyEnvelope?
        if let hop = response.envelopeHopS, let values { energy = EnergyEnvelope(hopS: hop, values: values) }
        if json {
            try Output.jsonLine(SongResult(response, envelope: energy))
        } else {
            print(Self.text(response, envelope: energy))
        }
    }

    static func text(_ response: ResultResponse, envelope: EnergyEnvelope?) -> String {
        var header = "song \(response.song)"
        if let name = response.name { header += "  \(name)" }
        if let duration = response.durationS { header += "  " + String(format: "%.2f s", duration) }
        var lines = [header]
        for analysis in response.analyses {
            let candidates = analysis.candidates.prefix(3).map { String(format: "%.1f", $0.bpm) }.joined(separator: ", ")
            lines.append(
                "  \(analysis.detector) \(analysis.version)  \(ServerText.bpm(analysis.bpm))  "
                    + String(format: "confidence %.2f", analysis.confidence)
                    + (candidates.isEmpty ? "" : "  candidates \(candidates)")
                    + (analysis.reason.map { "  (\($0))" } ?? ""))
            for window in analysis.windows {
                lines.append(
                    String(format: "    %8.2f s  +%.2f s  energy %.4g  ", window.startS, window.durationS, window.energy)
                        + ServerText.bpm(window.bpm) + String(format: "  strength %.2f", window.strength))
            }
        }
        if !response.pending.isEmpty { lines.append("  pending: " + response.pending.joined(separator: ", ")) }
        lines.append(
            "  consensus: \(ServerText.bpm(response.consensus.bpm))"
                + (response.consensus.detectors.isEmpty ? "" : " (\(response.consensus.detectors.joined(separator: ", ")))"))
        if let envelope {
            lines.append(String(format: "  envelope: %d values every %.4f s", envelope.values.count, envelope.hopS))
        }
        return lines.joined(separator: "\n")
    }
}

/// `result --json`: the reply's body, with the envelope inline when asked for.
struct SongResult: Encodable {
    var response: ResultResponse
    var envelope: EnergyEnvelope?

    init(_ response: ResultResponse, envelope: EnergyEnvelope?) {
        self.response = response
        self.envelope = envelope
    }

    private enum CodingKeys: String, CodingKey { case envelope }

    func encode(to encoder: any Encoder) throws {
        var body = response
        body.envelopeHopS = nil
        try body.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(envelope, forKey: .envelope)
    }
}
