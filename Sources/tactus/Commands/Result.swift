import ArgumentParser
import Foundation
import TactusDetector
import TactusPlot
import TactusProtocol

extension Tactus {
    /// `tactus result SONG`: a song's stored analyses.
    struct Result: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "result",
            abstract: "Show the stored analyses of a song.",
            discussion: """
                For each detector: BPM, confidence, top candidates and time, then the detectors \
                still pending and the consensus, then sparklines over the song's duration: the \
                energy envelope in dB (down to 60 dB below its peak) and each detector's tempo \
                per window, each scaled to its own range (printed after it). --windows adds each analysis's windows, --envelope the \
                song's energy envelope (mean squared amplitude per 23.2 ms).

                The song is a SHA-256 (or a prefix of 8+ hex digits), a file (its bytes are \
                hashed), or a path or file name the library stores. With --db, reads that library \
                file; otherwise asks the server.

                With --json: one object {song, name?, duration_s?, analyses (as `tactus analyze \
                --json` prints them), pending, consensus, envelope? ({hop_s, values})}.

                Examples:
                  tactus result dev_039.mp3
                  tactus result 3f9a3f9a --db lib.sqlite --json
                """
        )

        @Argument(help: ArgumentHelp(
            "The song: a SHA-256 (or 8+ of its first digits), a file, a stored path or file name.", valueName: "song"))
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

        @OptionGroup var source: LibrarySourceOptions

        func run() throws {
            let library = try LibrarySource(source, mode: .readOnly)
            // The sparklines need the windows and the envelope even when they are not listed.
            let (response, values) = try library.result(ResultRequest(
                song: try library.songName(song), detectors: detectorNames.isEmpty ? nil : detectorNames,
                windows: windows || !json ? true : nil, envelope: envelope || !json ? true : nil))
            var energy: EnergyEnvelope?
            if let hop = response.envelopeHopS, let values { energy = EnergyEnvelope(hopS: hop, values: values) }
            if json {
                try Output.jsonLine(SongResult(response, envelope: energy))
            } else {
                print(lines: Self.lines(response, envelope: energy, listingWindows: windows, listingEnvelope: envelope))
                print(lines: Timeline(response, envelope: energy, width: Terminal.columns(default: 60)).lines)
            }
        }

        static func lines(_ response: ResultResponse, envelope: EnergyEnvelope?, listingWindows: Bool, listingEnvelope: Bool) -> [String] {
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
                if let beats = analysis.beats { lines.append("    beats: " + Output.beats(beats)) }
                for window in analysis.windows where listingWindows {
                    lines.append(
                        String(format: "    %8.2f s  +%.2f s  energy %.4g  ", window.startS, window.durationS, window.energy)
                            + ServerText.bpm(window.bpm) + String(format: "  strength %.2f", window.strength))
                }
            }
            if !response.pending.isEmpty { lines.append("  pending: " + response.pending.joined(separator: ", ")) }
            lines.append(
                "  consensus: \(ServerText.bpm(response.consensus.bpm))"
                    + (response.consensus.detectors.isEmpty ? "" : " (\(response.consensus.detectors.joined(separator: ", ")))"))
            if let map = response.consensus.tempoMap { lines.append("  " + Output.tempoMap(map)) }
            if let grid = response.beatGrid { lines.append("  " + Output.beatGrid(grid)) }
            if let envelope, listingEnvelope {
                lines.append(String(format: "  envelope: %d values every %.4f s", envelope.values.count, envelope.hopS))
            }
            return lines
        }
    }
}

/// The sparklines under `result`'s text: the envelope in dB and each detector's per-window
/// tempo, on one time axis (the song's duration) so that their columns line up.
///
/// ```
///   over 3:25:
///   envelope     ▁▂▅▇█▇▅▃▂▁   -52.1..-6.3 dB
///   comb-filter  ▄▄▄▄▅▄▄▄▄▄   118.5..121.0 BPM
/// ```
struct Timeline {
    let lines: [String]

    /// Sparklines `width` characters wide in all (labels and ranges included; at least 20
    /// columns of chart), or none when the reply has neither an envelope nor window tempi.
    init(_ response: ResultResponse, envelope: EnergyEnvelope?, width: Int) {
        let windowsEnd = response.analyses.flatMap(\.windows).map { $0.startS + $0.durationS }.max() ?? 0
        let envelopeEnd = envelope.map { Double($0.values.count) * $0.hopS } ?? 0
        let duration = response.durationS.flatMap { $0 > 0 ? $0 : nil } ?? max(windowsEnd, envelopeEnd)
        // The envelope shows at most 60 dB below its loudest column, as the plot does.
        var series = [(label: String, columns: (Int) -> [Double?], floor: Double?, unit: String)]()
        if let envelope, !envelope.values.isEmpty {
            series.append(("envelope", { Sparkline.columns(of: envelope, durationS: duration, columns: $0) }, 60, "dB"))
        }
        for analysis in response.analyses where analysis.windows.contains(where: { $0.bpm != nil }) {
            series.append((analysis.detector, { Sparkline.columns(of: analysis.windows, durationS: duration, columns: $0) }, nil, "BPM"))
        }
        guard duration > 0, !series.isEmpty else {
            lines = []
            return
        }
        let labelWidth = series.map(\.label.count).max()!
        // Two spaces of indent, the label, two spaces, the chart, three spaces, a range of about 20 characters.
        let columns = max(width - 2 - labelWidth - 2 - 3 - 20, 20)
        lines = ["  over \(Output.clock(duration)):"] + series.map { row in
            let values = row.columns(columns)
            let finite = values.compactMap { $0 }
            guard let high = finite.max(), let lowest = finite.min() else {
                return "  " + row.label.padding(toLength: labelWidth, withPad: " ", startingAt: 0) + "  no values"
            }
            let low = row.floor.map { max(lowest, high - $0) } ?? lowest
            return "  " + row.label.padding(toLength: labelWidth, withPad: " ", startingAt: 0) + "  "
                + Sparkline.line(values, range: low...high) + "   " + String(format: "%.1f..%.1f ", low, high) + row.unit
        }
    }
}

/// The terminal `tactus` writes to.
enum Terminal {
    /// The width of standard output in characters when it is a terminal, else `fallback`.
    static func columns(default fallback: Int) -> Int {
        guard isatty(STDOUT_FILENO) != 0 else { return fallback }
        var size = winsize()
        if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        return ProcessInfo.processInfo.environment["COLUMNS"].flatMap { Int($0) } ?? fallback
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
