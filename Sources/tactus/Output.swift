import ArgumentParser
import Foundation
import TactusDetector
import TactusModel

/// `--json`: JSON (JSON Lines for lists) instead of tables.
struct OutputOptions: ParsableArguments {
    @Flag(help: "Print JSON for scripts (JSON Lines, one object per song, for lists).")
    var json = false
}

/// Output for people and for scripts.
enum Output {
    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return encoder
    }()

    /// One JSON object on one line.
    static func jsonLine(_ value: some Encodable) throws {
        Swift.print(ShownText.jsonSafe(String(decoding: try encoder.encode(value), as: UTF8.self)))
    }

    /// A table with a header line, columns padded to their widest cell. A cell never breaks
    /// its line: its control characters, line breaks included, are shown escaped.
    static func table(_ headers: [String], _ rows: [[String]]) {
        let rows = rows.map { $0.map { ShownText.escaped($0) } }
        var widths = headers.map(\.count)
        for row in rows {
            for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) }
        }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { index, cell in
                index == cells.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }
        print(line(headers))
        for row in rows { print(line(row)) }
    }

    /// A detector's beats in one line: how many, from when to when, the median interval as a
    /// tempo, and the downbeats' count.
    static func beats(_ beats: BeatPositions) -> String {
        let times = beats.times
        guard let first = times.first, let last = times.last else { return "no beats" }
        let intervals = zip(times.dropFirst(), times).map { $0 - $1 }.sorted()
        let tempo = intervals.isEmpty ? "" : String(format: ", median interval %.3f s (%.1f BPM)", intervals[intervals.count / 2], 60 / intervals[intervals.count / 2])
        let downbeats = beats.downbeats.map { ", \($0.count) downbeats" } ?? ""
        return "\(times.count) beats " + String(format: "from %.2f s to %.2f s", first, last) + tempo + downbeats
    }

    static func bpm(_ value: Double?) -> String {
        value.map { String(format: "%.2f", $0) } ?? "-"
    }

    static func factor(_ value: Double) -> String {
        value == 1 ? "1" : value == 0.5 ? "1/2" : String(format: "%g", value)
    }

    static func percent(_ share: Double) -> String {
        String(format: "%.1f %%", share * 100)
    }

    /// `m:ss`.
    /// A tempo map in one line: `tempo: steady, 127.0 to 127.5 BPM`, or its segments
    /// (`tempo changes: 0:00-0:43 100.1 BPM, 0:43-1:40 130.2 BPM`, a ramp as `110.2->80.0`).
    static func tempoMap(_ map: TempoMap) -> String {
        guard !map.stable else { return String(format: "tempo: steady, %.1f to %.1f BPM", map.minBPM, map.maxBPM) }
        let segments = map.segments.map { segment in
            "\(clock(segment.startS))-\(clock(segment.endS)) "
                + (segment.isSteady ? String(format: "%.1f BPM", segment.startBPM) : String(format: "%.1f->%.1f BPM", segment.startBPM, segment.endBPM))
        }
        return "tempo changes: " + segments.joined(separator: ", ")
    }

    /// A beat grid in one line: `beat grid: 127.98 BPM from 0.512 s (constant, clarity 2.31)`.
    static func beatGrid(_ grid: BeatGrid) -> String {
        String(format: "beat grid: %.2f BPM from %.3f s (constant, clarity %.2f)", grid.bpm, grid.firstBeatS, grid.clarity)
    }

    static func clock(_ seconds: Double) -> String {
        // A duration read from a damaged or edited library may be anything.
        guard seconds.isFinite, abs(seconds) < 1e12 else { return "?" }
        let total = Int(seconds.rounded())
        return String(format: "%d:%02d", total / 60, total % 60)
    }

    static func warn(_ message: String) {
        printError("tactus: warning: \(message)")
    }
}
