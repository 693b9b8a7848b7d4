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
    /// The files skipped that the previous `scan.progress` event counted.
    var skippedReported = 0

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
extension CoordinatorLoop {
    /// Routes `scan` (one at a time, the others wait for it) and `prune`.
    static func routeScans(into routes: inout RequestRoutes) {
        routes.on(ScanCommand.self) { loop, request, _, answer in loop.beginScan(request, then: answer) }
        routes.on(PruneCommand.self) { loop, request, _, answer in answer(Result { .prune(try loop.prune(request)) }) }
    }

    /// Files looked at in one piece of background work: small enough that the first songs are
    /// queued (and analysed) while the rest of a large tree is still being looked at.
    static let scanBatch = 32

    /// Queues a scan of `paths` (empty: every root), answered with its summary.
    func beginScan(_ request: ScanRequest, then answer: @escaping RequestRoutes.Answer) {
        guard !configuration.libraryRoots.isEmpty else {
            return answer(
                .failure(ErrorBody(code: .forbidden, message: "the server has no library root (start it with --library-root DIR)")))
        }
        guard accepting else {
            return answer(.failure(ErrorBody(code: .unavailable, message: "the server is stopping", retryAfterMs: 5000)))
        }
        waitingScans.append(PendingScan(paths: request.paths ?? [], answers: [answer]))
        startNextScan()
    }

    /// Adds paths the watcher saw change to the next scan (`nil`: every root, after an overflow).
    func scanWatched(_ paths: [String]?) {
        guard accepting else { return }
        if let index = waitingScans.firstIndex(where: { $0.answers.isEmpty }) {
            if let paths, !waitingScans[index].paths.isEmpty {
                waitingScans[index].paths = Array(Set(waitingScans[index].paths + paths)).sorted()
            } else {
                waitingScans[index].paths = []
            }
        } else {
            waitingScans.append(PendingScan(paths: paths ?? [], answers: []))
        }
        startNextScan()
    }

    private func startNextScan() {
        guard scanRunning == false, !waitingScans.isEmpty else { return }
        let pending = waitingScans.removeFirst()
        let detectors: [SubmissionIntake.Detector]
        do {
            let names = defaultDetectorNames
            guard !names.isEmpty else {
                throw ErrorBody(code: .unknownDetector, message: "no detector is available: no worker is connected")
            }
            detectors = try names.map { SubmissionIntake.Detector(name: $0, descriptor: try descriptor(of: $0)) }
        } catch {
            pending.answers.forEach { $0(.failure(error)) }
            return startNextScan()
        }
        let intake = SubmissionIntake(
            request: SubmitRequest(path: "scan"), audio: nil, detectors: detectors, library: library, blobs: coordinator.blobs,
            probe: coordinator.probe, maxSongBytes: configuration.maxSongBytes, maxAudioBytes: configuration.limits.maxAudioBytes,
            libraryRoots: configuration.libraryRoots)
        let scan = LibraryScan(library: library, roots: LibraryRoots(configuration.libraryRoots)) { file, name, song in
            let prepared = try intake.prepare(file, name: name, song: song)
            return LibraryScan.Preparation(
                song: prepared.song, location: file.location, songWasKnown: prepared.songWasKnown, requests: prepared.requests)
        }
        scanRunning = true
        let paths = pending.paths
        let started = ContinuousClock.now
        self.intake.run({ Result { try scan.plan(paths: paths) } }) { [self] planned in
            switch planned {
            case .failure(let error):
                scanRunning = false
                pending.answers.forEach { $0(.failure(error)) }
                if pending.answers.isEmpty { logger.warning("a watched scan failed", metadata: ["error": "\(error)"]) }
                startNextScan()
            case .success(let plan):
                let state = ScanState(scan: scan, plan: plan, answers: pending.answers, started: started)
                runningScan = state
                continueScan(state)
            }
        }
    }

    /// Looks at the next batch of files (hashed by the workers that share their roots, where
    /// any does), then the next, then finishes.
    private func continueScan(_ state: ScanState) {
        guard accepting else { return answerScansStopping() }
        guard state.next < state.plan.files.count else { return finishScan(state) }
        let batch = Array(state.plan.files[state.next..<min(state.next + Self.scanBatch, state.plan.files.count)])
        state.next += batch.count
        let scan = state.scan
        identities(of: batch) { [self] identities in
            intake.run({ zip(batch, identities).map { scan.look(at: $0, identity: $1) } }) { [self] outcomes in
                for (found, outcome) in zip(batch, outcomes) {
                    record(outcome, of: found, in: state)
                }
                let progress = state.tally.progress(
                    looked: state.next, seconds: (ContinuousClock.now - state.started).seconds, skippedSince: state.skippedReported)
                state.skippedReported = progress.skippedCount ?? 0
                publish(.scanProgress(progress))
                continueScan(state)
            }
        }
    }

    private func record(_ outcome: LibraryScan.Outcome, of found: LibraryScan.Found, in state: ScanState) {
        guard case .queue(let prepared, _, _) = outcome else { return state.tally.count(outcome) }
        do {
            guard pending.count + prepared.requests.count <= configuration.maxQueuedJobs else {
                throw ErrorBody(code: .busy, message: "the queue is full (\(pending.count) jobs); scan again later")
            }
            let jobs = try library.enqueue(prepared.song, jobs: prepared.requests, location: prepared.location)
            for job in jobs where job.state == .queued && !pending.contains(job.id) {
                pending.append(PendingJob(job))
                state.tally.queued(1)
            }
            state.tally.count(outcome)
        } catch {
            state.tally.skip(found, error)
        }
    }

    private func finishScan(_ state: ScanState) {
        let scan = state.scan
        let unseen = state.plan.unseen
        intake.run({ Result { try scan.finish(unseen) } }) { [self] finished in
            scanRunning = false
            runningScan = nil
            switch finished {
            case .failure(let error):
                state.answers.forEach { $0(.failure(error)) }
            case .success(let (moved, missing)):
                let summary = state.tally.finished(moved: moved, missing: missing, seconds: (ContinuousClock.now - state.started).seconds)
                logger.info(
                    "scan done",
                    metadata: [
                        "files": "\(summary.files)", "new": "\(summary.new)", "changed": "\(summary.changed)",
                        "moved": "\(summary.moved)", "missing": "\(summary.missing)", "unchanged": "\(summary.unchanged)",
                        "skipped": "\(summary.skipped.count)", "jobs": "\(summary.queuedJobs)",
                        "hashed-by-workers": "\(summary.hashedByWorkers ?? 0)",
                    ])
                state.answers.forEach { $0(.success(.scan(summary))) }
            }
            startNextScan()
        }
    }

    /// Answers the running scan (which stops where it is) and the waiting ones `unavailable`:
    /// the server is stopping. The files not looked at yet are looked at by the next scan.
    func answerScansStopping() {
        let stopping = ErrorBody(
            code: .unavailable, message: "the server is stopping; scan again once it is back", retryAfterMs: 5000)
        runningScan?.answers.forEach { $0(.failure(stopping)) }
        runningScan = nil
        scanRunning = false
        for scan in waitingScans { scan.answers.forEach { $0(.failure(stopping)) } }
        waitingScans.removeAll()
    }

    // MARK: prune

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
