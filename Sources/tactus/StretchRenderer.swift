import TactusCoordinator
import TactusProtocol
import TactusStretch

/// The renderer `tactus serve` gives its coordinator: ``SongStretch`` (Rubber Band's faster engine),
/// the song's tempo taken from the library rather than analysed again, and ``WorkoutRender`` for
/// playlists (crossfades of 2 s on beats, as `tactus playlist --render`).
struct StretchRenderer: SongRenderer {
    func render(songAt path: String, name: String, sourceBPM: Double, targetBPM: Double, to output: String) throws(ErrorBody)
        -> Double
    {
        do throws(StretchError) {
            // The coordinator checked the change against the request's maximum: none here.
            let file = try OutputFile(path: output, sparing: [path])
            return try SongStretch.render(path, targetBPM: targetBPM, output: file, sourceBPM: sourceBPM, maxStretch: .infinity)
                .outputSeconds
        } catch {
            switch error {
            case .unreadable(_, let message):
                throw ErrorBody(code: .unreadable, message: "\(name): " + message.replacing(path + ": ", with: ""))
            case .noTempo, .tooFar, .cannotWrite:
                throw ErrorBody(code: .internal, message: "\(name): \(error.description)")
            }
        }
    }

    func renderWorkout(_ songs: [WorkoutSong], to output: String) throws(ErrorBody) -> Double {
        let pieces = songs.map { WorkoutRender.Piece(file: $0.path, sourceBPM: $0.sourceBPM, targetBPM: $0.targetBPM) }
        do throws(StretchError) {
            return try WorkoutRender.render(pieces, to: try OutputFile(path: output, sparing: pieces.map(\.file))).seconds
        } catch {
            switch error {
            case .unreadable(let file, let message):
                let name = songs.first { $0.path == file }?.name ?? file
                throw ErrorBody(code: .unreadable, message: "\(name): " + message.replacing(file + ": ", with: ""))
            case .noTempo, .tooFar, .cannotWrite:
                throw ErrorBody(code: .internal, message: error.description)
            }
        }
    }
}
