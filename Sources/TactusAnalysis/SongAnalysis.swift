import Foundation
import TactusAudio
import TactusDetector
import TactusModel

/// Everything the analysis of one song produced: who the song is, what every detector found,
/// their consensus and the song's energy envelope, or why the song could not be analysed.
///
/// Encoded as one JSON object (`analyze --json` writes one per line): `file`, `song`,
/// `duration_s`, `error` (null or `{code, message}`), `analyses`, `envelope` (only when
/// ``includesEnvelopeInJSON``), `consensus` (`{bpm, detectors}`), `beat_grid` (``BeatGrid`` or null)
/// and `warnings` (`[{code, message}]`).
public struct SongAnalysis: Sendable, Encodable {
    /// The file path, or the name given to in-memory bytes.
    public var file: String
    /// The song's identity (the SHA-256 of its bytes), when the bytes could be read.
    public var song: SongID?
    /// What the decoder found out about the song (exact duration once decoded).
    public var metadata: AudioMetadata?
    /// One analysis per detector, in the order the detectors were given.
    public var analyses: [TempoAnalysis]
    /// Mean squared amplitude per 23.2 ms block, the same for every detector.
    public var envelope: EnergyEnvelope?
    /// The constant beat grid of the consensus tempo, when the song shows a clear beat at it.
    public var beatGrid: BeatGrid?
    /// The detectors' agreement (``Consensus/of(_:tolerance:advisory:)`` of ``analyses``, the
    /// advisory detectors' not voting).
    public var consensus: ConsensusTempo
    /// Things worth knowing about a song that was analysed (a truncated file, for example).
    public var warnings: [AnalysisProblem]
    /// Why the song could not be analysed; `analyses` is then empty.
    public var error: AnalysisProblem?
    /// Wall-clock seconds spent decoding the song (on a thread of its own, beside the
    /// detectors, unless the decoding options say otherwise).
    public var decodeSeconds: Double
    /// Whether ``encode(to:)`` writes `envelope` (`analyze --envelope`).
    public var includesEnvelopeInJSON = false

    public init(
        file: String, song: SongID? = nil, metadata: AudioMetadata? = nil, analyses: [TempoAnalysis] = [],
        envelope: EnergyEnvelope? = nil, beatGrid: BeatGrid? = nil, consensus: ConsensusTempo? = nil, warnings: [AnalysisProblem] = [], error: AnalysisProblem? = nil, decodeSeconds: Double = 0,
        advisory: Set<String> = []
    ) {
        self.file = file
        self.song = song
        self.metadata = metadata
        self.analyses = analyses
        self.envelope = envelope
        self.beatGrid = beatGrid
        self.consensus = consensus ?? Consensus.of(analyses, advisory: advisory)
        self.warnings = warnings
        self.error = error
        self.decodeSeconds = decodeSeconds
    }

    /// The song's duration in seconds, when it was decoded.
    public var durationSeconds: Double? { metadata?.duration }

    enum CodingKeys: String, CodingKey {
        case file, song, durationS = "duration_s", error, analyses, envelope, consensus, warnings
        case beatGrid = "beat_grid"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(file, forKey: .file)
        try container.encode(song, forKey: .song)
        try container.encode(error == nil ? durationSeconds : nil, forKey: .durationS)
        try container.encode(error, forKey: .error)
        try container.encode(analyses, forKey: .analyses)
        if includesEnvelopeInJSON {
            try container.encode(envelope, forKey: .envelope)
        }
        try container.encode(consensus, forKey: .consensus)
        try container.encode(beatGrid, forKey: .beatGrid)
        try container.encode(warnings, forKey: .warnings)
    }
}

/// Why a song could not be analysed, or a warning about one that was: a stable
/// machine-readable code and a sentence for people. Encoded as `{code, message}`.
public struct AnalysisProblem: CodedError, Sendable, Hashable, Codable {
    /// For decoding problems, the ``AudioError/code`` or ``AudioWarning/code`` (`corrupt`,
    /// `too-short`, `truncated`...).
    public var code: ErrorCode
    public var message: String

    public init(code: ErrorCode, message: String) {
        self.code = code
        self.message = message
    }

    public init(_ error: AudioError) {
        self.init(code: error.code, message: error.description)
    }

    public init(_ warning: AudioWarning) {
        self.init(code: warning.code, message: warning.description)
    }

    /// The analysis of `file` took longer than `limit` (``SongAnalyzer/timeLimit``) and was
    /// stopped after `reached` seconds of audio: code `timeout`.
    public static func timeLimitExceeded(_ file: String, limit: Duration, reached: Double) -> AnalysisProblem {
        AnalysisProblem(
            code: .timeout,
            message: "\(file): the analysis was stopped at its time limit of \(Self.seconds(limit)) s, "
                + "\(String(format: "%.1f", reached)) s into the song")
    }

    /// `limit` in seconds, without a fraction when it is whole (`30`, `0.5`).
    private static func seconds(_ limit: Duration) -> String {
        let (whole, attoseconds) = limit.components
        return attoseconds == 0 ? "\(whole)" : "\(Double(whole) + Double(attoseconds) / 1e18)"
    }

    public var description: String { message }
}
