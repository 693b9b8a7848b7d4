/// Why the library refused a request. Every case names what was wrong (the song, the file and
/// line, the field and the accepted range) so it can be shown to a person as is. A refused
/// write leaves the database exactly as it was.
public enum StoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The library file could not be opened or created.
    case cannotOpen(path: String, reason: String)
    /// Another process is the library's writer (a running `tactus serve`, or a command given
    /// `--db`): one writer at a time, so that nothing it relies on is removed under it.
    case inUse(path: String)
    /// The library file was written by a newer Tactus (it has migrations this one does not know).
    case newerSchema(path: String, unknownMigrations: [String])
    /// No song of the library matches the name (SHA-256, prefix or file).
    case unknownSong(String)
    /// A SHA-256 prefix matches several songs.
    case ambiguousSong(prefix: String, matches: Int)
    /// A file name (or path) that several songs of the library have; at most
    /// ``SongResolution/maxCandidates`` of them are listed.
    case ambiguousName(String, candidates: [SongResolution.Candidate])
    /// A song name that is neither a SHA-256, a prefix of at least 8 hex digits, nor a file.
    case invalidSongName(String, reason: String)
    /// A tempo outside ``TempoQuery/acceptedBPM``; `field` says which one.
    case bpmOutOfRange(field: String, value: Double)
    /// Any other value outside what the field accepts (negative durations, empty names...).
    case invalidValue(field: String, value: String, accepted: String)
    /// A CSV file with a line that cannot be read; nothing of the file was imported.
    case malformedCSV(file: String, line: Int, reason: String)
    /// A file that could not be read.
    case unreadableFile(path: String, reason: String)
    /// A cadence profile such as `10m@150,5m@170` that cannot be parsed.
    case invalidProfile(String, reason: String)
    /// Another connection (another process) held a lock on the library for longer than the
    /// busy timeout; nothing was written. Retrying later is safe.
    case locked(path: String, waitedS: Double)
    /// The disk holding the library is full (or the file at its size limit); nothing was
    /// written. Retrying once space is freed is safe.
    case full(path: String)
    /// SQLite refused the operation (an I/O error, a damaged file...).
    case database(String)

    public var description: String {
        switch self {
        case .cannotOpen(let path, let reason):
            return "cannot open the library \(path): \(reason)"
        case .inUse(let path):
            return "the library \(path) is in use by another writer (a running `tactus serve` on its data directory, or "
                + "another command given --db); stop it, or ask the server (--server) instead"
        case .newerSchema(let path, let unknown):
            return "the library \(path) was written by a newer tactus (unknown migrations: \(unknown.joined(separator: ", ")))"
        case .unknownSong(let name):
            return "no song in the library matches '\(name)' (as a SHA-256, a prefix of one, a stored path or a file name)"
        case .ambiguousSong(let prefix, let matches):
            return "'\(prefix)' is the prefix of \(matches) songs; give more digits"
        case .ambiguousName(let name, let candidates):
            let listed = candidates.map { "\($0.song.short) \($0.file)" }.joined(separator: "; ")
            return "'\(name)' is the path or file name of several songs (\(listed)); name one by its SHA-256 or a prefix of it"
        case .invalidSongName(let name, let reason):
            return "'\(name)' does not name a song: \(reason)"
        case .bpmOutOfRange(let field, let value):
            return "\(field) = \(value) is out of range; expected a tempo in 1...1000 BPM"
        case .invalidValue(let field, let value, let accepted):
            return "\(field) = \(value) is not accepted; expected \(accepted)"
        case .malformedCSV(let file, let line, let reason):
            return "\(file):\(line): \(reason) (nothing was imported)"
        case .unreadableFile(let path, let reason):
            return "cannot read \(path): \(reason)"
        case .invalidProfile(let spec, let reason):
            return "invalid cadence profile '\(spec)': \(reason)"
        case .locked(let path, let waited):
            return "the library \(path) is locked by another connection (waited \(waited) s); nothing was written, try again"
        case .full(let path):
            return "the disk holding the library \(path) is full; nothing was written, try again once space is freed"
        case .database(let message):
            return "database error: \(message)"
        }
    }
}
