import Foundation
import Logging
import Synchronization
import TactusAnalysis
import TactusProtocol
import TactusZMQ

/// The thread that analyses songs, so that the socket thread keeps heartbeating while a
/// long analysis runs.
///
/// It talks to the socket thread over an `inproc://` PAIR socket: the socket thread puts each
/// decoded JOB in a ``JobHandoff`` and sends an empty frame to say so (the song's bytes are not
/// copied into another message nor decoded again); the thread answers each with the frames of
/// its RESULT, in order, one at a time. It ends when the context is shut down.
enum AnalysisThread {
    /// Starts the thread; it connects a PAIR socket of `context` to `endpoint`, which the
    /// caller has bound. With `niceness` above 0 the thread lowers its own CPU priority (and
    /// only its own: Linux keeps the nice value per thread).
    static func start(
        context: ZMQContext, endpoint: String, handoff: JobHandoff, runner: JobRunner, niceness: Int32 = 0, logger: Logger
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
                    _ = try socket.receive()
                    try socket.send(answer(handoff.take(), runner: runner, logger: logger))
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

    /// The frames of the RESULT answering `message`, a JOB of either version, or one empty
    /// frame when there is no JOB to answer (the socket thread hands over only JOBs, so this
    /// does not happen).
    static func answer(_ message: CoordinatorMessage?, runner: JobRunner, logger: Logger) -> [[UInt8]] {
        let clock = ContinuousClock()
        let start = clock.now
        switch message {
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

/// The JOBs the socket thread hands to the analysis thread, in order: decoded messages whose
/// song bytes are shared, never copied. The socket thread puts a JOB, then rings the analysis
/// thread's PAIR socket once; each ring takes the oldest JOB.
final class JobHandoff: Sendable {
    private let queue = Mutex<[CoordinatorMessage]>([])

    /// Leaves `message` for the analysis thread.
    func put(_ message: CoordinatorMessage) {
        queue.withLock { $0.append(message) }
    }

    /// The oldest JOB left by the socket thread (nil when there is none), which no longer holds it.
    func take() -> CoordinatorMessage? {
        queue.withLock { $0.isEmpty ? nil : $0.removeFirst() }
    }

    /// Takes back the JOB just put, when the analysis thread could not be rung.
    func withdrawLast() {
        queue.withLock { _ = $0.popLast() }
    }
}
