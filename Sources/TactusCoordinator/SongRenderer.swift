import TactusProtocol

/// Renders a song of the library at another tempo, pitch kept, or a playlist as one workout, for
/// the `stretch` request.
///
/// The coordinator is given one (``Coordinator/init(configuration:probe:renderer:logger:)``) and
/// never links a time-stretching library itself: `tactus serve` gives it one built on
/// TactusStretch (Rubber Band). It is called on the coordinator's render threads, one song at a
/// time per thread.
public protocol SongRenderer: Sendable {
    /// Writes the song stored at `path` (named `name` in messages), whose tempo is `sourceBPM`
    /// (already at the octave chosen), played at `targetBPM` as a WAV file at `output`, and
    /// returns the file's duration in seconds. A song that cannot be rendered throws an
    /// ``ErrorBody`` (the audio error's code and message), which the render's `failed` state reports.
    func render(songAt path: String, name: String, sourceBPM: Double, targetBPM: Double, to output: String) throws(ErrorBody)
        -> Double

    /// Writes `songs` one after the other, each played at its target tempo, as one continuous WAV
    /// file at `output` (joined by crossfades), and returns its duration in seconds. A song that
    /// cannot be rendered throws an ``ErrorBody`` naming it.
    func renderWorkout(_ songs: [WorkoutSong], to output: String) throws(ErrorBody) -> Double
}

extension SongRenderer {
    /// A renderer of single songs only refuses workouts with `forbidden`.
    public func renderWorkout(_ songs: [WorkoutSong], to output: String) throws(ErrorBody) -> Double {
        throw ErrorBody(code: .forbidden, message: "this server does not render playlists")
    }
}

/// A song of a workout handed to ``SongRenderer/renderWorkout(_:to:)``.
public struct WorkoutSong: Sendable, Hashable {
    /// Where the song's bytes are stored.
    public var path: String
    /// The song's file name, for messages.
    public var name: String
    /// The song's tempo at the octave that serves its segment.
    public var sourceBPM: Double
    /// The segment's cadence: the tempo to play the song at.
    public var targetBPM: Double

    public init(path: String, name: String, sourceBPM: Double, targetBPM: Double) {
        self.path = path
        self.name = name
        self.sourceBPM = sourceBPM
        self.targetBPM = targetBPM
    }
}
