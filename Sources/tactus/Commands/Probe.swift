import ArgumentParser
import Foundation
import TactusAudio
import TactusModel

extension Tactus {
    /// `tactus probe FILE...`: decodes each file completely and describes it.
    struct Probe: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "probe",
            abstract: "Decode audio files and describe them.",
            discussion: """
                For each file: format, codec, sample rate, channels, duration, tags, the song \
                identity (SHA-256 of the bytes) and the time taken to decode the whole file. The \
                format is recognised from the content, whatever the file is called.

                With --json, one JSON object per file and per line, with the fields file, song, \
                format, codec, sample_rate, channels, duration_s, title, artist, album, \
                decode_seconds, warnings (array of {code, message}) and error (null, or {code, \
                message}; codes: empty, unsupported-format, corrupt, truncated, too-short, \
                too-long, unreadable).

                Exit status: 0 when every file decoded, 1 when any failed, 2 on usage errors.
                """
        )

        @Argument(help: ArgumentHelp("The audio files to probe.", valueName: "file"))
        var files: [String]

        @Flag(help: "Print one JSON object per file and per line (JSON Lines).")
        var json = false

        @Option(help: ArgumentHelp("Songs longer than this many seconds fail with too-long.", valueName: "seconds"))
        var maxSeconds: Double = DecodingOptions.standard.maximumSeconds

        @Option(help: ArgumentHelp("Songs shorter than this many seconds fail with too-short.", valueName: "seconds"))
        var minSeconds: Double = DecodingOptions.standard.minimumSeconds

        func validate() throws {
            guard !files.isEmpty else { throw ValidationError("Give at least one file to probe.") }
            guard minSeconds >= 0, maxSeconds > minSeconds else {
                throw ValidationError("--min-seconds must be at least 0 and below --max-seconds (got \(minSeconds) and \(maxSeconds)).")
            }
        }

        func run() throws {
            let options = DecodingOptions(minimumSeconds: minSeconds, maximumSeconds: maxSeconds)
            var failures = 0
            for file in files {
                let report = ProbeReport(probing: file, options: options)
                if report.error != nil { failures += 1 }
                if json { print(jsonLine: report.jsonLine()) } else { print(lines: report.lines()) }
            }
            if failures > 0 { throw ExitCode.failure }
        }
    }
}

/// What `tactus probe` found about one file.
struct ProbeReport: Encodable {
    var file: String
    /// The SHA-256 of the file (the song id), when the file could be read.
    var song: SongID?
    var metadata: AudioMetadata?
    var decodeSeconds: Double?
    var warnings: [AudioWarning] = []
    var error: AudioError?

    /// Hashes and decodes `file` to the end, timing the decoding.
    init(probing file: String, options: DecodingOptions) {
        self.file = file
        let source = AudioSource.file(file)
        let clock = ContinuousClock()
        let start = clock.now
        do throws(AudioError) {
            let stream = try AudioStream(source, options: options)
            defer { metadata = stream.metadata }
            try stream.readToEnd()
            warnings = stream.warnings
            decodeSeconds = (clock.now - start).seconds
        } catch {
            self.error = error
        }
        song = try? SongID(of: source)
    }

    private enum CodingKeys: String, CodingKey {
        case file, song, format, codec, sample_rate, channels, duration_s, title, artist, album
        case decode_seconds, warnings, error
    }

    private struct Problem: Encodable {
        var code: ErrorCode
        var message: String
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(file, forKey: .file)
        try container.encode(song, forKey: .song)
        try container.encode(metadata?.format.rawValue, forKey: .format)
        try container.encode(metadata?.codec, forKey: .codec)
        try container.encode(metadata?.sampleRate, forKey: .sample_rate)
        try container.encode(metadata?.channels, forKey: .channels)
        try container.encode(error == nil ? metadata?.duration : nil, forKey: .duration_s)
        try container.encode(metadata?.tags.title, forKey: .title)
        try container.encode(metadata?.tags.artist, forKey: .artist)
        try container.encode(metadata?.tags.album, forKey: .album)
        try container.encode(decodeSeconds, forKey: .decode_seconds)
        try container.encode(warnings.map { Problem(code: $0.code, message: $0.description) }, forKey: .warnings)
        try container.encode(error.map { Problem(code: $0.code, message: $0.description) }, forKey: .error)
    }

    func jsonLine() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding strings, numbers and nulls cannot fail.
        return String(decoding: (try? encoder.encode(self)) ?? Data("{}".utf8), as: UTF8.self)
    }

    func lines() -> [String] {
        var lines = [file]
        if let metadata {
            var signal = "\(metadata.format) (\(metadata.codec)), \(metadata.sampleRate) Hz, "
                + "\(metadata.channels) channel\(metadata.channels == 1 ? "" : "s")"
            if error == nil { signal += ", " + String(format: "%.3f s", metadata.duration) }
            if let bitrate = metadata.bitrate { signal += ", \(bitrate / 1000) kb/s" }
            lines.append("  audio     " + signal)
            let tags = metadata.tags
            let fields: [(String, String?)] = [
                ("title", tags.title), ("artist", tags.artist), ("album", tags.album),
                ("genre", tags.genre), ("year", tags.year.map(String.init)),
            ]
            for case (let name, let value?) in fields {
                lines.append("  \(name.padding(toLength: 9, withPad: " ", startingAt: 0)) \(value)")
            }
        }
        if let song { lines.append("  sha256    \(song)") }
        if let decodeSeconds, let duration = metadata?.duration {
            let speed = decodeSeconds > 0 ? String(format: " (%.0fx real time)", duration / decodeSeconds) : ""
            lines.append(String(format: "  decoded   in %.3f s", decodeSeconds) + speed)
        }
        for warning in warnings { lines.append("  warning   [\(warning.code)] \(warning)") }
        if let error { lines.append("  error     [\(error.code)] \(error)") }
        return lines
    }
}
