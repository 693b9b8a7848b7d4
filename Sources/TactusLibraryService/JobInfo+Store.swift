import TactusModel
import TactusProtocol
import TactusStore

extension JobInfo {
    /// The wire form of a stored job.
    public init(_ job: JobRecord) {
        self.init(
            job: job.id, song: job.song, detector: job.detector, state: JobState(rawValue: job.state.rawValue) ?? .failed,
            attempt: job.attempts,
            error: job.failure.map(ErrorBody.init))
    }
}
