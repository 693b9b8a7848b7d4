import Foundation
import TactusAudio
import TactusClient
import TactusModel
import TactusProtocol
import TactusStore
import TactusStretch

extension Tactus.Playlist {
    /// With --render: `playlist` rendered into that file, its songs found under --music, each at its
    /// segment's cadence; without --music, the same playlist (`request`) rendered by the server.
    func renderIfAsked(_ playlist: TactusModel.Playlist, request: PlaylistQuery) throws {
        guard let path = following.render else { return }
        guard let music = following.music else { return try renderOnServer(request, to: path) }
        let files = SongFiles(directory: music)
        var pieces: [WorkoutRender.Piece] = []
        for entry in playlist.entries {
            guard let file = files.path(of: entry.match.song, named: entry.match.file) else {
                throw CommandFailure(
                    "song \(entry.match.song.short) (\(entry.match.file)) is not under \(music): no file of that name "
                        + "has its content")
            }
            pieces.append(WorkoutRender.Piece(file: file, sourceBPM: entry.match.matchedBPM, targetBPM: entry.cadence))
        }
        let rendered: WorkoutRender.Rendered
        do throws(StretchError) {
            // The file a playlist is rendered into is replaced, as it always was; never a song it plays.
            rendered = try WorkoutRender.render(
                pieces, to: try OutputFile(path: path, replacing: true, sparing: pieces.map(\.file)), crossfade: following.crossfade, placement: following.crossfadeByTime ? .byTime : .onBeats)
        } catch {
            throw CommandFailure(error.description)
        }
        let onBeats = rendered.pieces.count { $0.joinedOnBeat }, joins = max(rendered.pieces.count - 1, 0)
        let summary = "rendered \(rendered.output): \(rendered.pieces.count) songs (\(onBeats) of \(joins) joins on beats), "
            + "\(Output.clock(rendered.seconds)) in "
            + String(format: "%.1f s (%.0fx real time)", rendered.renderSeconds, rendered.seconds / max(rendered.renderSeconds, 1e-9))
        if output.json {
            printError(summary)
        } else {
            print(summary)
        }
    }
}

extension Tactus.Playlist {
    /// The playlist of `request` rendered by the server (a `stretch` request with a playlist, its
    /// songs chosen within --max-stretch) and downloaded into `path`.
    func renderOnServer(_ request: PlaylistQuery, to path: String) throws {
        var query = request
        query.tolerance = nil
        let file = try OutputFile.checked(path, replacing: true)
        let client = try reportingFailures { try source.server.client() }
        let rendered: (status: RenderStatus, wav: [UInt8])
        do throws(ClientError) {
            rendered = try client.renderedSong(StretchRequest(playlist: query, maxStretchPct: following.maxStretch))
        } catch {
            throw CommandFailure("rendering the playlist: \(error.description)")
        }
        try file.save(rendered.wav)
        let summary = "rendered \(path): \(rendered.status.songs?.count ?? 0) songs, \(Output.clock(rendered.status.durationS ?? 0)) "
            + String(format: "by %@ in %.1f s", client.server, rendered.status.renderS ?? 0)
        if output.json {
            printError(summary)
        } else {
            print(summary)
        }
    }
}

/// The audio files under a directory, by file name; a song is the file of its name whose
/// content hashes to its id.
struct SongFiles {
    private var byName: [String: [String]] = [:]

    init(directory: String) {
        let root = URL(fileURLWithPath: directory)
        let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey])
        while let url = walker?.nextObject() as? URL {
            guard (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true else { continue }
            byName[url.lastPathComponent, default: []].append(url.path)
        }
    }

    func path(of song: SongID, named name: String) -> String? {
        byName[name]?.first { (try? SongID(of: .file($0))) == song }
    }
}
