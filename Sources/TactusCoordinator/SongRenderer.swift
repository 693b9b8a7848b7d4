import TactusProtocol

/// Renders a song of the library at another tempo, pitch kept, for the `stretch` request.
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
}
