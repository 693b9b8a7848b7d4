import Foundation
import TactusAudio
import TactusModel
import TactusStore
import TactusStretch

extension Tactus.Playlist {
    /// With --render: `playlist` rendered into that file, its songs found under --music, each at its
    /// segment's cadence.
    func renderIfAsked(_ playlist: TactusModel.Playlist) throws {
        guard let path = following.render, let music = following.music else { return }
        let files = SongFiles(directory: music)
        var pieces: [WorkoutRender.Piece] = []
        for entry in playlist.entries {
            guard let file = files.path(of: entry.match.song, named: entry.match.file) else {
                throw CommandFailure(
                    "song \(entry.match.song.hex.prefix(12)) (\(entry.match.file)) is not under \(music): no file of that name "
                        + "has its content")
            }
            pieces.append(WorkoutRender.Piece(file: file, sourceBPM: entry.match.matchedBPM, targetBPM: entry.cadence))
        }
        let rendered: WorkoutRender.Rendered
        do throws(StretchError) {
            rendered = try WorkoutRender.render(
                pieces, to: path, crossfade: following.crossfade, placement: following.crossfadeByTime ? .byTime : .onBeats)
        } catch {
            throw CommandFailure(error.description)
        }
        let onBeats = rendered.pieces.count { $0.joinedOnBeat }, joins = max(rendered.pieces.count - 1, 0)
        let summary = "rendered \(rendered.output): \(rendered.pieces.count) songs (\(onBeats) of \(joins) joins on beats), "
            + "\(Output.clock(rendered.seconds)) in "
            + String(format: "%.1f s (%.0fx real time)", rendered.renderSeconds, rendered.seconds / max(rendered.renderSeconds, 1e-9))
        if output.json {
            FileHandle.standardError.write(Data((TerminalText.escaped(summary, keepingNewlines: true) + "\n").utf8))
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
