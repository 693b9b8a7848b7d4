import TactusModel
import TactusProtocol

/// Reads an accelerometer recording a client sent and finds its cadence, for the `cadence`
/// request.
///
/// The coordinator is given one (``Coordinator/init(configuration:probe:renderer:tagger:recordings:logger:)``)
/// and never parses a recording itself: `tactus serve` gives it one that runs each recording in a
/// service host process (TactusServiceHost), so that a recording that traps, takes the memory or
/// takes for ever fails its own request. It is called on the coordinator's service threads,
/// several recordings at a time.
public protocol RecordingAnalyzer: Sendable {
    /// The cadence of `recording`, named `name` in the report and its errors. A recording that
    /// cannot be read throws `bad-recording` naming the problem.
    func cadence(of recording: [UInt8], name: String) throws(ErrorBody) -> CadenceReport

    /// The cadence of the recording in the coordinator's file at `path` (an upload's), `size`
    /// bytes, named `name` in the report and its errors.
    func cadence(ofFileAt path: String, size: Int, name: String) throws(ErrorBody) -> CadenceReport
}
