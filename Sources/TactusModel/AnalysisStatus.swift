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
    /// For example `decode.unsupported-format` or `worker.lost`.
    public var code: String
    public var message: String

    public init(code: String, message: String) {
        self.code = code
        self.message = message
    }

    enum CodingKeys: String, CodingKey {
        case code, message
    }
}
