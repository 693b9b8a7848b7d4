/// What a name a person gives for a song stands for in a library: the answer to `resolve`.
///
/// A name is a SHA-256 or a prefix of at least 8 hex digits, a path the library stores for a
/// song, or a stored file name that only one song has. A file on the asker's disk is hashed by
/// the asker and sent as its SHA-256 (a server never reads its clients' files); `name` then
/// keeps what the person typed.
///
/// ```swift
/// let found = SongResolution(name: "dev_039.mp3", song: id, file: "dev_039.mp3", by: .fileName)
/// ```
public struct SongResolution: Sendable, Hashable, Codable {
    /// How the name was recognised.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// A full SHA-256.
        case id
        /// A unique prefix of at least 8 hex digits.
        case prefix
        /// The SHA-256 of a file's bytes, hashed where the file is.
        case content
        /// A path the library stores for the song.
        case path
        /// The file name of exactly one song.
        case fileName = "file-name"
    }

    /// One of several songs a name could mean.
    public struct Candidate: Sendable, Hashable, Codable {
        public var song: SongID
        public var file: String

        public init(song: SongID, file: String) {
            self.song = song
            self.file = file
        }

        enum CodingKeys: String, CodingKey {
            case song, file
        }
    }

    /// Why a name names no song: `not-found`, `ambiguous` (see ``SongResolution/candidates``),
    /// `unreadable` (a file that could not be hashed) or `bad-request` (not a name at all:
    /// empty, or a prefix too short).
    public struct Problem: Sendable, Hashable, Codable {
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

    /// The name as given.
    public var name: String
    /// The song, when the name names exactly one.
    public var song: SongID?
    /// The song's stored file name.
    public var file: String?
    public var by: Kind?
    public var problem: Problem?
    /// The songs an ambiguous name could mean (at most ``maxCandidates``).
    public var candidates: [Candidate]?

    /// At most this many candidates are listed for an ambiguous name.
    public static let maxCandidates = 20

    /// A name that names one song.
    public init(name: String, song: SongID, file: String, by: Kind) {
        self.name = name
        self.song = song
        self.file = file
        self.by = by
    }

    /// A name that names no song, or several (`candidates`).
    public init(name: String, problem: Problem, candidates: [Candidate]? = nil) {
        self.name = name
        self.problem = problem
        self.candidates = candidates
    }

    /// The answer for `name` when the library refused it: ambiguous names carry their candidates.
    public init(name: String, error: StoreError) {
        switch error {
        case .unknownSong:
            self.init(name: name, problem: Problem(code: .notFound, message: error.description))
        case .ambiguousName(_, let candidates):
            self.init(name: name, problem: Problem(code: .ambiguous, message: error.description), candidates: candidates)
        case .ambiguousSong:
            self.init(name: name, problem: Problem(code: .ambiguous, message: error.description))
        case .unreadableFile:
            self.init(name: name, problem: Problem(code: .unreadable, message: error.description))
        default:
            self.init(name: name, problem: Problem(code: .badRequest, message: error.description))
        }
    }

    enum CodingKeys: String, CodingKey {
        case name, song, file, by, problem, candidates
    }
}

extension ErrorCode {
    /// A name several songs have (a ``SongResolution/Problem`` of `resolve`, not an error reply).
    public static let ambiguous = ErrorCode(rawValue: "ambiguous")
}
