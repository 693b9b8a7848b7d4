/// How an analysis ended.
public enum AnalysisStatus: String, Sendable, Hashable, Codable, CaseIterable {
    /// The detector found a tempo.
    case done
    /// The detector ran to the end and found no tempo (silence, no periodicity).
    case noTempo = "no-tempo"
    /// The analysis could not run (undecodable file, worker crash...); see ``AnalysisFailure``.
    case failed
}

/// Why an analysis failed: a stable machine-readable code and a message for people.
public struct AnalysisFailure: Sendable, Hashable, Codable {
    /// The error's code: a decode error's (`unsupported-format`), `worker-lost`, `timeout`...
    public var code: ErrorCode
    public var message: String

    public init(code: ErrorCode, message: String) {
        self.code = code
        self.message = message
    }

    enum CodingKeys: String, CodingKey {
        case code, message
    }
}
