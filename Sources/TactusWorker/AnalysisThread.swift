import Foundation
import Logging
import TactusAnalysis
import TactusProtocol
import TactusZMQ

/// The thread that analyses songs, so that the socket thread keeps heartbeating while a
/// long analysis runs.
///
/// It talks to the socket thread over an `inproc://` PAIR socket: it receives JOB messages
/// exactly as the coordinator sent them and answers each with the frames of its RESULT, in
/// order, one at a time. It ends when the context is shut down.
enum AnalysisThread {
    /// Starts the thread; it connects a PAIR socket of `context` to `endpoint`, which the
    /// caller has bound. With `niceness` above 0 the thread lowers its own CPU priority (and
    /// only its own: Linux keeps the nice value per thread).
    static func start(
        context: ZMQContext, endpoint: String, runner: JobRunner, limits: ProtocolLimits, niceness: Int32 = 0, logger: Logger
    ) {
        let thread = Thread {
            if niceness > 0 {
                do {
                    try ResourceLimits.lowerPriority(niceness: niceness)
                } catch {
                    logger.warning("\(error)")
                }
            }
            do throws(ZMQError) {
                let socket = try context.socket(.pair)
                defer { socket.close() }
                try socket.connect(endpoint)
                while true {
                    let frames = try socket.receive()
                    try socket.send(answer(frames, runner: runner, limits: limits, logger: logger))
                }
            } catch where error.isTerminated {
                // The worker is stopping.
            } catch {
                ResourceLimits.abortIfOutOfMemory(error, logger: logger)
                logger.critical("the analysis thread stopped: \(error)")
            }
        }
        thread.name = "tactus-analysis"
        // Decoders and detectors keep their buffers on the heap, but leave room for C libraries.
        thread.stackSize = 8 << 20
        thread.start()
    }

    /// The frames of the RESULT answering the JOB in `frames` (either version), or one empty frame when there
    /// is no JOB to answer (the socket thread forwards only JOBs it has decoded, so this does
    /// not happen).
    static func answer(_ frames: [[UInt8]], runner: JobRunner, limits: ProtocolLimits, logger: Logger) -> [[UInt8]] {
        let clock = ContinuousClock()
        let start = clock.now
        switch try? CoordinatorMessage(frames: frames, limits: limits) {
        case .job(let job, let audio)?:
            let outcome = runner.run(job, audio: audio)
            let metadata: Logger.Metadata = [
                "job": "\(job.job)", "attempt": "\(job.attempt)", "song": "\(job.song)",
                "seconds": "\(String(format: "%.2f", (clock.now - start).seconds))",
            ]
            if let analysis = outcome.result.analysis {
                logger.info("analysed: \(analysis.bpm.map { String(format: "%.2f BPM", $0) } ?? "no tempo")", metadata: metadata)
            } else if let error = outcome.result.error {
                logger.warning("failed: \(error.code): \(error.message)", metadata: metadata)
            }
            log(outcome.warnings, metadata: metadata, logger: logger)
            do throws(ProtocolError) {
                return try outcome.message.frames()
            } catch {
                // A result that cannot be encoded (a non-finite number) is the detector's fault.
                let failure = JobOutcome(job: job, error: ErrorBody(code: .internal, message: error.description))
                return (try? failure.message.frames()) ?? [[]]
            }
        case .songJob(let song, let audio)?:
            let outcome = runner.run(song, audio: audio)
            let metadata: Logger.Metadata = [
                "jobs": "\(song.jobs.map { "\($0.job)/\($0.attempt)" }.joined(separator: ","))", "song": "\(song.song)",
                "seconds": "\(String(format: "%.2f", (clock.now - start).seconds))",
            ]
            for (entry, answer) in zip(song.jobs, outcome.result.results) {
                if let analysis = answer.analysis {
                    logger.info(
                        "analysed (\(entry.detector)): \(analysis.bpm.map { String(format: "%.2f BPM", $0) } ?? "no tempo")",
                        metadata: metadata)
                } else if let error = answer.error {
                    logger.warning("failed (\(entry.detector)): \(error.code): \(error.message)", metadata: metadata)
                }
            }
            log(outcome.warnings, metadata: metadata, logger: logger)
            do throws(ProtocolError) {
                return try outcome.message.frames()
            } catch {
                // A result that cannot be encoded (a non-finite number) is a detector's fault.
                let failure = SongJobOutcome(song: song, error: ErrorBody(code: .internal, message: error.description))
                return (try? failure.message.frames()) ?? [[]]
            }
        default:
            return [[]]
        }
    }

    private static func log(_ warnings: [AnalysisProblem], metadata: Logger.Metadata, logger: Logger) {
        for warning in warnings {
            logger.warning("\(warning.code): \(warning.message)", metadata: metadata)
        }
    }
}
