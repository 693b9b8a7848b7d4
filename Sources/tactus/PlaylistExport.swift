import ArgumentParser
import Foundation
import TactusModel

/// `--m3u8 FILE` and `--relative`: the songs found written as a playlist a player opens.
struct M3U8Options: ParsableArguments {
    @Option(help: ArgumentHelp("Also write the songs into this M3U8 playlist (#EXTM3U, #EXTINF, paths).", valueName: "file"))
    var m3u8: String?

    @Flag(help: "With --m3u8: paths relative to the playlist's folder (absolute by default).")
    var relative = false

    func validate() throws {
        if relative && m3u8 == nil { throw ValidationError("--relative goes with --m3u8") }
    }
}

/// Writes songs found by `query` or `playlist` into an M3U8 file, each at its path: the path the
/// library stores for it, else the file of its name under --music whose content is the song.
/// Songs without a path are left out and named in a warning each.
struct PlaylistExport {
    let options: M3U8Options
    /// Where to look for files by name (`--music`), when given.
    let music: String?

    /// Writes `matches` when --m3u8 was given; the summary goes to standard output, or to
    /// standard error with --json (whose standard output is JSON Lines).
    func writeIfAsked(_ matches: [TempoMatch], json: Bool) throws {
        guard let path = options.m3u8 else { return }
        let files = music.map(SongFiles.init(directory:))
        let songs = matches.map { match in
            M3U8.Song(match, path: match.paths.first ?? files?.path(of: match.song, named: match.file).map(Self.absolute))
        }
        let written: M3U8.Written
        do throws(M3U8.WriteError) {
            written = try M3U8(songs).write(to: path, relative: options.relative)
        } catch {
            throw CommandFailure(error.description)
        }
        for omission in written.omitted {
            Output.warn("song \(omission.song.song.short) (\(omission.song.file)) is not in \(path): \(omission.reason)")
        }
        let summary = "wrote \(written.path): \(written.songs) of \(matches.count) songs"
            + (written.omitted.isEmpty ? "" : ", \(written.omitted.count) without a known path"
                + (music == nil ? " (--music DIR finds songs by file name and content)" : ""))
        if json {
            printError(summary)
        } else {
            print(summary)
        }
    }

    static func absolute(_ path: String) -> String {
        URL(fileURLWithPath: path).standardizedFileURL.path
    }
}
