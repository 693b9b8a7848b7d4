import Foundation
import Logging
import TactusLibraryRoots
import TactusLibraryService
import TactusModel
import TactusProtocol
import TactusStore

/// A scan waiting to run or running: the paths to scan (empty: every root) and who to answer.
struct PendingScan {
    var paths: [String]
    /// The clients to answer with the summary (none for a scan the watcher started).
    var answers: [RequestRoutes.Answer]
}

/// A running scan's progress, on the loop.
final class ScanState {
    let scan: LibraryScan
    let plan: LibraryScan.Plan
    let answers: [RequestRoutes.Answer]
    /// When the scan started (before its walk).
    let started: ContinuousClock.Instant
    var tally: ScanTally
    var next = 0

    init(
        scan: LibraryScan, plan: LibraryScan.Plan, answers: [RequestRoutes.Answer],
        started: ContinuousClock.Instant
    ) {
        self.scan = scan
        self.started = started
        self.plan = plan
        self.answers = answers
        tally = ScanTally(plan)
    }
}

/// `scan` and `serve --watch`: the library roots compared with the library, one scan at a time
/// (a scan asked for while one runs waits; the watcher's paths gather meanwhile).
///
/// Owns its state: the scans waiting and the one running. Lives on the loop's thread; the loop
/// routes it `scan`, hands it the watcher's paths, and lends it what a scan needs of the broker:
/// the intake threads, the workers that hash files, the queue its songs' jobs go to, the events.
final class ScanService: RequestService {
    /// Scans waiting for the running one (``isRunning``) to end.
    private var waiting: [PendingScan] = []
    /// Whether a scan is running (from its walk on).
    private var isRunning = false
    /// The scan whose files are being looked at, if any.
    private var running: ScanState?

    /// Routes `scan` to this service (one at a time, the others wait for it), and `prune`.
    func route(into routes: inout RequestRoutes) {
        routes.on(ScanCommand.self) { [self] loop, request, _, answer in begin(request, loop: loop, then: answer) }
        routes.on(PruneCommand.self) { loop, request, _, answer in answer(Result { .prune(try loop.prune(request)) }) }
    }

    /// Files looked at in one piece of background work: small enough that the first songs are
    /// queued (and analysed) while the rest of a large tree is still being looked at.
    static let batch = 32

    /// Queues a scan of `paths` (empty: every root), answered with its summary.
    func begin(_ request: ScanRequest, loop: CoordinatorLoop, then answer: @escaping RequestRoutes.Answer) {
        guard !loop.coordinator.libraryRoots.isEmpty else {
            return answer(
                .failure(ErrorBody(code: .forbidden, message: "the server has no library root (start it with --library-root DIR)")))
        }
        guard loop.accepting else {
            return answer(.failure(ErrorBody(code: .unavailable, message: "the server is stopping", retryAfterMs: 5000)))
        }
        waiting.append(PendingScan(paths: request.paths ?? [], answers: [answer]))
        startNext(loop)
    }

    /// Adds paths the watcher saw change to the next scan (`nil`: every root, after an overflow;
    /// more than ``LibraryWatcher/maximumPaths`` in all: every root too).
    func watched(_ paths: [String]?, loop: CoordinatorLoop) {
        guard loop.accepting else { return }
        if let index = waiting.firstIndex(where: { $0.answers.isEmpty }) {
            waiting[index].paths = LibraryWatcher.union(Set(waiting[index].paths), paths).sorted()
        } else {
            waiting.append(PendingScan(paths: paths ?? [], answers: []))
        }
        startNext(loop)
    }

    private func startNext(_ loop: CoordinatorLoop) {
        guard isRunning == false, !waiting.isEmpty else { return }
        let pending = waiting.removeFirst()
        let detectors: [SubmissionIntake.Detector]
        do {
            detectors = try loop.detectors(nil)
        } catch {
            pending.answers.forEach { $0(.failure(error)) }
            return startNext(loop)
        }
        let intake = SubmissionIntake(
            request: SubmitRequest(path: "scan"), audio: nil, detectors: detectors, library: loop.library, blobs: loop.coordinator.blobs,
            probe: loop.coordinator.probe, maxSongBytes: loop.configuration.maxSongBytes, maxAudioBytes: loop.configuration.limits.maxAudioBytes,
            libraryRoots: loop.coordinator.libraryRoots)
        let scan = LibraryScan(library: loop.library, roots: loop.coordinator.libraryRoots) { file, name, song in
            let prepared = try intake.prepare(file, name: name, song: song)
            return LibraryScan.Preparation(
                song: prepared.song, location: file.location, songWasKnown: prepared.songWasKnown, requests: prepared.requests)
        }
        isRunning = true
        let paths = pending.paths
        let started = ContinuousClock.now
        loop.intake.run({ Result { try scan.plan(paths: paths) } }) { [self] planned in
            switch planned {
            case .failure(let error):
                isRunning = false
                pending.answers.forEach { $0(.failure(error)) }
                if pending.answers.isEmpty { loop.logger.warning("a watched scan failed", metadata: ["error": "\(error)"]) }
                startNext(loop)
            case .success(let plan):
                let state = ScanState(scan: scan, plan: plan, answers: pending.answers, started: started)
                running = state
                proceed(state, loop)
            }
        }
    }

    /// Looks at the next batch of files (hashed by the workers that share their roots, where
    /// any does), then the next, then finishes.
    private func proceed(_ state: ScanState, _ loop: CoordinatorLoop) {
        guard loop.accepting else { return answerStopping() }
        guard state.next < state.plan.files.count else { return finish(state, loop) }
        let batch = Array(state.plan.files[state.next..<min(state.next + Self.batch, state.plan.files.count)])
        state.next += batch.count
        let scan = state.scan
        loop.identities(of: batch) { [self] identities in
            loop.intake.run({ scan.look(at: batch, identities: identities) }) { [self] outcomes in
                for (found, outcome) in zip(batch, outcomes) {
                    record(outcome, of: found, in: state, loop)
                }
                let progress = state.tally.progress(looked: state.next, seconds: (ContinuousClock.now - state.started).seconds)
                loop.publish(.scanProgress(progress))
                proceed(state, loop)
            }
        }
    }

    private func record(_ outcome: LibraryScan.Outcome, of found: LibraryScan.Found, in state: ScanState, _ loop: CoordinatorLoop) {
        guard case .queue(let prepared, _, _) = outcome else { return state.tally.count(outcome) }
        do {
            guard loop.pending.count + prepared.requests.count <= loop.configuration.maxQueuedJobs else {
                throw ErrorBody(code: .busy, message: "the queue is full (\(loop.pending.count) jobs); scan again later")
            }
            try loop.checkSongJobs(prepared.song.id, adding: prepared.requests)
            let jobs = try loop.library.enqueue(prepared.song, jobs: prepared.requests, location: prepared.location)
            for job in jobs where job.state == .queued && !loop.pending.contains(job.id) {
                loop.pending.append(PendingJob(job))
                state.tally.queued(1)
            }
            state.tally.count(outcome)
        } catch {
            state.tally.skip(found, error)
        }
    }

    private func finish(_ state: ScanState, _ loop: CoordinatorLoop) {
        let scan = state.scan
        let unseen = state.plan.unseen
        loop.intake.run({ Result { try scan.finish(unseen) } }) { [self] finished in
            isRunning = false
            running = nil
            switch finished {
            case .failure(let error):
                state.answers.forEach { $0(.failure(error)) }
            case .success(let (moved, missing)):
                let summary = state.tally.finished(moved: moved, missing: missing, seconds: (ContinuousClock.now - state.started).seconds)
                loop.logger.info(
                    "scan done",
                    metadata: [
                        "files": "\(summary.files)", "new": "\(summary.new)", "changed": "\(summary.changed)",
                        "moved": "\(summary.moved)", "missing": "\(summary.missing)", "unchanged": "\(summary.unchanged)",
                        "skipped": "\(summary.skippedTotal)", "jobs": "\(summary.queuedJobs)",
                        "hashed-by-workers": "\(summary.hashedByWorkers ?? 0)",
                    ])
                state.answers.forEach { $0(.success(.scan(summary.listingSkips()))) }
            }
            startNext(loop)
        }
    }

    /// Answers the running scan (which stops where it is) and the waiting ones `unavailable`:
    /// the server is stopping. The files not looked at yet are looked at by the next scan.
    func answerStopping() {
        let stopping = ErrorBody(
            code: .unavailable, message: "the server is stopping; scan again once it is back", retryAfterMs: 5000)
        running?.answers.forEach { $0(.failure(stopping)) }
        running = nil
        isRunning = false
        for scan in waiting { scan.answers.forEach { $0(.failure(stopping)) } }
        waiting.removeAll()
    }
}

/// `prune`: the song bytes no job needs removed.
extension CoordinatorLoop {
    /// Removes the blobs no queued or running job needs (uploads whose jobs are over, when the
    /// server keeps uploads, and anything left by an older version).
    func prune(_ request: PruneRequest) throws -> PruneSummary {
        let summary = try library.prune(coordinator.blobs, dryRun: request.dryRun ?? false)
        logger.info(
            "pruned song blobs",
            metadata: ["removed": "\(summary.removed)", "bytes": "\(summary.removedBytes)", "dry-run": "\(summary.dryRun)"])
        return summary
    }
}
