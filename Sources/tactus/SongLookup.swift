import TactusClient
import TactusLibraryService
import TactusModel
import TactusProtocol

/// The songs a person names on the command line, resolved by ``SongNames`` (files hashed
/// here) against a server's `resolve` or a library file's read service: the same answers, and
/// the same messages, either way.
enum SongLookup {
    /// The resolution of each name by the server.
    static func resolve(_ names: [String], on client: TactusClient) throws -> [SongResolution] {
        try reportingFailures { try SongNames.resolve(names) { try client.resolve(ResolveRequest(names: $0)) } }
    }

    /// The resolution of each name by a library file's read service.
    static func resolve(_ names: [String], in service: LibraryService) throws -> [SongResolution] {
        let ids = LibraryService(library: service.library, songNames: .ids)
        return try reportingFailures { try SongNames.resolve(names) { try ids.resolve(ResolveRequest(names: $0)).songs } }
    }

    /// What to tell the server for the one song `name` stands for: the name itself when it is a
    /// SHA-256 or a prefix of 8+ hex digits (which every request takes, and which `resolve` would
    /// only echo), else the SHA-256 `resolve` answers; a failure saying why (listing the
    /// candidates of an ambiguous name) when it names none.
    static func songName(_ name: String, on client: TactusClient) throws -> String {
        if isID(name) { return name }
        return try song(try resolve([name], on: client)[0]).hex
    }

    /// Whether `name` is 8 to 64 hex digits and not a file here: an id or a prefix of one.
    static func isID(_ name: String) -> Bool {
        (8...64).contains(name.utf8.count) && SongID.isHexPrefix(name) && !SongNames.isFile(name)
    }

    /// The song of a resolution, or a failure saying why it names none.
    static func song(_ resolution: SongResolution) throws -> SongID {
        if let song = resolution.song { return song }
        throw CommandFailure(lines: message(resolution))
    }

    /// Why a name names no song, with the candidates of an ambiguous name one per line.
    static func message(_ resolution: SongResolution) -> [String] {
        guard let candidates = resolution.candidates, !candidates.isEmpty else {
            return [resolution.problem?.message ?? "'\(resolution.name)' names no song"]
        }
        return ["'\(resolution.name)' names several songs; give one's SHA-256 (or 8+ of its first digits):"]
            + candidates.map { "  \($0.song.hex)  \($0.file)" }
    }
}
