import TactusModel

/// `resolve`: the songs that names stand for, each name on its own (one unknown or ambiguous
/// name does not fail the others). A name is a SHA-256 or a prefix of at least 8 hex digits,
/// a path the library stores, or a stored file name that only one song has; the server never
/// reads a file named by a client (a client hashes its own files and sends the SHA-256).
public struct ResolveRequest: WireBody {
    /// 1 to ``maxNames`` names, each 1 to 4096 bytes of UTF-8.
    public var names: [String]

    /// The most names one request may carry.
    public static let maxNames = 1000

    public init(names: [String]) {
        self.names = names
    }

    public func validate(command: String) throws(ProtocolError) {
        guard (1...Self.maxNames).contains(names.count) else {
            throw .invalidBody(command: command, field: "names", detail: "must hold 1 to \(Self.maxNames) names")
        }
        for name in names { try Check.text(name, field: "names", max: 4096, command: command) }
    }
}

/// The answer to `resolve`: one resolution per name, in the request's order.
public struct ResolveResponse: WireBody {
    public var songs: [SongResolution]

    public init(songs: [SongResolution]) {
        self.songs = songs
    }
}
