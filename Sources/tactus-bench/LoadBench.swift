import ArgumentParser
import Foundation
import Synchronization
import TactusAnalysis
import TactusClient
import TactusModel
import TactusProtocol
import TactusTestSupport
import TactusZMQ

/// `tactus-bench load` (`make loadtest`): many clients submitting small songs at once while
/// another asks range queries, against a release `tactus serve` with its local workers.
struct LoadBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "load",
        abstract: "Concurrent clients submitting songs while queries run: latencies, memory, no loss.",
        discussion: """
            A fresh `tactus serve --workers N` runs every built-in detector. --clients \
            clients, each on a thread with its own connection, submit --songs-per-client \
            different small songs, made as they go (--seconds of 8 kHz mono WAV click tracks at 80 to 170 BPM) \
            one after the other, as fast as the answers come; a `busy` answer waits as it asks \
            and is counted. Meanwhile another client asks a BPM range query every \
            --query-interval-ms, and a monitor samples the coordinator's resident memory \
            (VmRSS) and queue every half second.

            Each of --rounds rounds submits new songs and waits until every job is done. \
            Reported: submissions per second, p50/p99 latency of the submit answers and of the \
            queries asked while jobs were queued, the coordinator's memory at the end of each \
            round, and whether every accepted song finished (every one of its jobs done, one \
            analysis per detector). Targets: no loss, p99 submit answer under 50 ms, p99 \
            query under 20 ms, coordinator memory flat: the last round ends within 5 % of the \
            highest end of the rounds before it. The first rounds fill the library's page \
            caches (SQLite's 2 MiB per connection); a leak of even 300 bytes per job would add \
            3.5 MiB to every round of 12,000 jobs.

            Then a round under a CPU hog (--hog-songs-per-client songs per client, 0 for none): \
            as many busy processes as cores (--hog-processes) run while the songs are submitted \
            and analysed. Targets: no worker purged (no worker.lost event), no job tried twice, \
            no client giving up, no song lost.
            """
    )

    @Option(help: "Concurrent submitting clients.")
    var clients = 8

    @Option(help: "Songs each client submits in each round.")
    var songsPerClient = 500

    @Option(help: "Rounds: each submits new songs and waits until every job is done (memory is compared between their ends).")
    var rounds = 3

    @Option(help: "Length of each song in seconds.")
    var seconds: Double = 6

    @Option(help: "Milliseconds between two range queries.")
    var queryIntervalMs = 50

    @Option(help: "Local workers per detector.")
    var workers = 1

    @Option(help: "Songs each client submits in the round under a CPU hog (0: no such round).")
    var hogSongsPerClient = 50

    @Option(help: "Busy processes during the round under a CPU hog (default: as many as cores).")
    var hogProcesses: Int?

    @OptionGroup var tactus: TactusExecutableOption

    @Flag(help: "Print one JSON object with every figure.")
    var json = false

    func validate() throws {
        guard (1...64).contains(clients) else { throw ValidationError("--clients must be between 1 and 64.") }
        guard (1...100_000).contains(songsPerClient) else { throw ValidationError("--songs-per-client must be between 1 and 100000.") }
        guard (1...20).contains(rounds) else { throw ValidationError("--rounds must be between 1 and 20.") }
        guard seconds >= 2, seconds <= 600 else { throw ValidationError("--seconds must be between 2 and 600.") }
        guard (1...10_000).contains(queryIntervalMs) else { throw ValidationError("--query-interval-ms must be between 1 and 10000.") }
        guard (1...16).contains(workers) else { throw ValidationError("--workers must be between 1 and 16.") }
        guard (0...100_000).contains(hogSongsPerClient) else {
            throw ValidationError("--hog-songs-per-client must be between 0 and 100000.")
        }
        guard (1...256).contains(hogProcesses ?? 1) else { throw ValidationError("--hog-processes must be between 1 and 256.") }
    }

    /// Every figure of a run.
    struct Report: Encodable {
        var clients: Int
        var songs_per_round: Int
        var rounds: [Round]
        var song_kilobytes: Double
        var workers_per_detector: Int
        var cores: Int
        var busy_answers: Int
        var submit_ms: Percentiles?
        var queries: Int
        var queries_while_queued: Int
        var query_ms_while_queued: Percentiles?
        var query_ms_all: Percentiles?
        var peak_queue: Int
        var memory_before_mib: Double
        var memory_peak_mib: Double
        /// The coordinator's memory at the end of the last round is within 5 % of the highest
        /// at the end of an earlier round.
        var memory_flat: Bool?
        var accepted_songs: Int
        var finished_songs: Int
        var failed_jobs: Int
        /// Jobs that took more than one attempt (their worker was lost meanwhile).
        var retried_jobs: Int
        var lost_songs: [SongID]
        /// The round under a CPU hog, when there was one.
        var hog_round: HogRound?
        /// The monitor's samples: seconds since the start, resident MiB, jobs queued or running.
        var samples: [[Double]]
    }

    /// One round: its submissions and its drain.
    struct Round: Encodable {
        var submit_wall_s: Double
        var submissions_per_s: Double
        var drain_wall_s: Double
        var jobs_per_s: Double
        /// The coordinator's resident memory once every job of the round was done.
        var end_mib: Double
    }

    /// The round under a CPU hog.
    struct HogRound: Encodable {
        var busy_processes: Int
        var songs: Int
        var submit_wall_s: Double
        var drain_wall_s: Double
        var jobs_per_s: Double
        var busy_answers: Int
        var submit_ms: Percentiles?
        /// `worker.lost` events during the round, with their reasons.
        var workers_lost: [String]
        /// Clients that stopped on an error (gave up).
        var client_errors: [String]
        /// The round's accepted songs that did not finish.
        var lost_songs: Int
        var retried_jobs: Int
    }

    struct Percentiles: Encodable {
        var p50: Double
        var p99: Double
        var max: Double

        init?(_ values: [Double]) {
            guard !values.isEmpty else { return nil }
            let sorted = values.sorted()
            func at(_ fraction: Double) -> Double { sorted[min(Int((Double(sorted.count) * fraction).rounded(.up)) - 1, sorted.count - 1)] }
            p50 = at(0.5)
            p99 = at(0.99)
            max = sorted[sorted.count - 1]
        }
    }

    func run() throws {
        let executable = try tactus.path()
        let songKilobytes = Double(try BenchSongs.tiny(index: 0, seconds: seconds).count) / 1024
        let data = try TemporaryDirectory(prefix: "tactus-bench-load-data")
        let server = try ServeProcess(executable: executable, dataDirectory: data.path, workersPerDetector: workers)
        defer { server.stop() }
        let detectors = BuiltinDetectors.registry.names
        try server.awaitWorkers(detectors: detectors, perDetector: workers)
        let perRound = clients * songsPerClient
        if !json {
            print(
                "\(rounds) round(s) of \(clients) clients x \(songsPerClient) songs (\(format(seconds, 0)) s, 8 kHz WAV, "
                    + "\(format(songKilobytes, 0)) KiB), \(workers) worker(s) per detector, a range query every \(queryIntervalMs) ms")
        }

        let monitor = try LoadMonitor(server: server)
        let queries = QueryStream(frontend: server.endpoints.frontend, interval: .milliseconds(queryIntervalMs), monitor: monitor)
        var figures: [Round] = []
        var accepted: [SongID] = []
        var latencies: [Double] = []
        var busy = 0
        for round in 0..<rounds {
            let start = ContinuousClock.now
            let first = round * perRound, songSeconds = seconds, progress = !json
            let load = ConcurrentSubmission(
                count: perRound, clients: clients, server: server.endpoints.frontend,
                song: { index in
                    (SubmitRequest(name: "load-\(first + index).wav"), try BenchSongs.tiny(index: first + index, seconds: songSeconds))
                },
                answered: { answer in
                    let done = answer.acceptedSoFar
                    guard progress, answer.song != nil, done % 500 == 0 || done == perRound else { return }
                    FileHandle.standardError.write(Data(("\r  submitted \(done)/\(perRound)" + (done == perRound ? "\n" : "")).utf8))
                })
            load.wait()
            let submitWall = (ContinuousClock.now - start).seconds
            if let error = load.errors.first { throw BenchFailure("submit: \(error)") }
            try monitor.awaitDrained(after: .now, timeout: .seconds(3600))
            let drainWall = (ContinuousClock.now - start).seconds
            accepted += load.accepted
            latencies += load.answers.map { $0.seconds * 1000 }
            busy += load.answers.filter { $0.song == nil }.count
            let end = monitor.samples.last?.residentMiB ?? 0
            figures.append(
                Round(
                    submit_wall_s: submitWall, submissions_per_s: Double(load.accepted.count) / submitWall, drain_wall_s: drainWall,
                    jobs_per_s: Double(load.accepted.count * detectors.count) / drainWall, end_mib: end))
            if !json {
                print(
                    "  round \(round + 1): \(load.accepted.count) songs submitted in \(format(submitWall, 1)) s, every job done after "
                        + "\(format(drainWall, 1)) s; coordinator at \(mib(end))")
            }
        }
        var hogRound: HogRound?
        var hogAccepted: [SongID] = []
        if hogSongsPerClient > 0 {
            let (round, songs) = try runHogRound(server: server, first: rounds * perRound, monitor: monitor, detectors: detectors)
            hogRound = round
            hogAccepted = songs
        }
        queries.stop()
        monitor.stop()
        if let error = queries.errors.first { throw BenchFailure("query: \(error)") }
        let (finished, failedJobs, retried, lost) = try Self.check(
            accepted + hogAccepted, detectors: detectors, frontend: server.endpoints.frontend)
        if var round = hogRound {
            let (_, _, hogRetried, hogLost) = try Self.check(hogAccepted, detectors: detectors, frontend: server.endpoints.frontend)
            round.lost_songs = hogLost.count
            round.retried_jobs = hogRetried
            hogRound = round
        }

        let samples = monitor.samples
        let queued = queries.latencies.filter(\.whileQueued).map(\.ms)
        let report = Report(
            clients: clients, songs_per_round: perRound, rounds: figures, song_kilobytes: songKilobytes,
            workers_per_detector: workers, cores: ProcessInfo.processInfo.activeProcessorCount, busy_answers: busy,
            submit_ms: Percentiles(latencies), queries: queries.latencies.count, queries_while_queued: queued.count,
            query_ms_while_queued: Percentiles(queued), query_ms_all: Percentiles(queries.latencies.map(\.ms)),
            peak_queue: samples.map(\.queued).max() ?? 0, memory_before_mib: monitor.residentBeforeMiB,
            memory_peak_mib: samples.map(\.residentMiB).max() ?? 0,
            memory_flat: figures.count > 1
                ? figures[figures.count - 1].end_mib <= figures.dropLast().map(\.end_mib).max()! * 1.05 : nil,
            accepted_songs: accepted.count + hogAccepted.count, finished_songs: finished, failed_jobs: failedJobs,
            retried_jobs: retried, lost_songs: lost, hog_round: hogRound,
            samples: samples.map { [$0.at, $0.residentMiB, Double($0.queued)] })
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            print(String(decoding: try encoder.encode(report), as: UTF8.self))
        } else {
            printReport(report)
        }
        if !lost.isEmpty { throw BenchFailure("\(lost.count) accepted songs did not finish (first: \(lost[0]))") }
        if let hogRound, !hogRound.workers_lost.isEmpty || !hogRound.client_errors.isEmpty || hogRound.retried_jobs > 0 {
            throw BenchFailure(
                "under the CPU hog: \(hogRound.workers_lost.count) workers lost, \(hogRound.client_errors.count) clients gave up, "
                    + "\(hogRound.retried_jobs) jobs tried again")
        }
    }

    /// Submits a round of songs while `hogProcesses` busy processes run, and waits until every
    /// job is done, watching the `worker.lost` events meanwhile.
    private func runHogRound(
        server: ServeProcess, first: Int, monitor: LoadMonitor, detectors: [String]
    ) throws -> (HogRound, accepted: [SongID]) {
        let count = clients * hogSongsPerClient
        let processes = hogProcesses ?? ProcessInfo.processInfo.activeProcessorCount
        let losses = WorkerLossWatch(events: server.endpoints.events)
        defer { losses.stop() }
        let hog = try CPUHog(processes: processes)
        defer { hog.stop() }
        if !json { print("  round under a CPU hog: \(processes) busy processes, \(count) songs") }
        let start = ContinuousClock.now
        let songSeconds = seconds
        let load = ConcurrentSubmission(
            count: count, clients: clients, server: server.endpoints.frontend,
            song: { index in
                (SubmitRequest(name: "hog-\(first + index).wav"), try BenchSongs.tiny(index: first + index, seconds: songSeconds))
            })
        load.wait()
        let submitWall = (ContinuousClock.now - start).seconds
        try monitor.awaitDrained(after: .now, timeout: .seconds(3600))
        let drainWall = (ContinuousClock.now - start).seconds
        hog.stop()
        let round = HogRound(
            busy_processes: processes, songs: load.accepted.count, submit_wall_s: submitWall, drain_wall_s: drainWall,
            jobs_per_s: Double(load.accepted.count * detectors.count) / drainWall,
            busy_answers: load.answers.filter { $0.song == nil }.count,
            submit_ms: Percentiles(load.answers.filter { $0.song != nil }.map { $0.seconds * 1000 }),
            workers_lost: losses.lost, client_errors: load.errors, lost_songs: 0, retried_jobs: 0)
        if !json {
            print(
                "  round under the hog: \(load.accepted.count) songs submitted in \(format(submitWall, 1)) s, every job done after "
                    + "\(format(drainWall, 1)) s")
        }
        return (round, load.accepted)
    }

    /// Every accepted song's jobs, asked of the server one song at a time: how many songs
    /// finished with every job done and one analysis per detector, how many jobs failed, and
    /// the songs that did not finish.
    private static func check(
        _ songs: [SongID], detectors: [String], frontend: String
    ) throws -> (finished: Int, failedJobs: Int, retriedJobs: Int, lost: [SongID]) {
        let client = try TactusClient(server: frontend, timeout: .seconds(10))
        var finished = 0
        var failedJobs = 0
        var retriedJobs = 0
        var lost: [SongID] = []
        for song in songs {
            let jobs = try client.status(song: song).jobs
            failedJobs += jobs.filter { $0.state == .failed }.count
            retriedJobs += jobs.filter { $0.attempt > 1 }.count
            let analysed = try client.result(ResultRequest(song: song)).response.analyses.map(\.detector)
            if jobs.count == detectors.count && jobs.allSatisfy({ $0.state == .done }) && analysed.sorted() == detectors.sorted() {
                finished += 1
            } else {
                lost.append(song)
            }
        }
        return (finished, failedJobs, retriedJobs, lost)
    }

    // MARK: Output

    private func printReport(_ report: Report) {
        print("")
        let submitted = report.rounds.reduce(0) { $0 + $1.submit_wall_s }
        print(
            "Submissions: \(report.accepted_songs) songs, \(format(Double(report.accepted_songs) / submitted, 0)) songs/s while "
                + "submitting (\(report.busy_answers) busy answers)")
        if let submit = report.submit_ms {
            print(
                "  submit answer:  p50 \(ms(submit.p50))  p99 \(ms(submit.p99))  max \(ms(submit.max))"
                    + "  (target p99 < 50 ms: \(submit.p99 < 50 ? "meets" : "misses"))")
        }
        if let queued = report.query_ms_while_queued {
            print(
                "  range query while jobs were queued (\(report.queries_while_queued) of \(report.queries)):  p50 \(ms(queued.p50))"
                    + "  p99 \(ms(queued.p99))  max \(ms(queued.max))  (target p99 < 20 ms: \(queued.p99 < 20 ? "meets" : "misses"))")
        }
        let jobsPerSecond = report.rounds.map { format($0.jobs_per_s, 0) }.joined(separator: ", ")
        print("Drain: \(jobsPerSecond) jobs/s over each round (peak queue \(report.peak_queue) jobs)")
        let ends = report.rounds.map { mib($0.end_mib) }.joined(separator: ", ")
        let verdict = report.memory_flat.map { $0 ? "flat" : "NOT flat" } ?? "one round: run --rounds 2 to compare"
        print(
            "Coordinator resident memory: \(mib(report.memory_before_mib)) before, \(ends) at the end of each round"
                + " (peak \(mib(report.memory_peak_mib))): \(verdict)")
        print(
            "Accepted songs finished: \(report.finished_songs) of \(report.accepted_songs)"
                + " (\(report.failed_jobs) failed jobs, \(report.retried_jobs) tried again); "
                + (report.lost_songs.isEmpty ? "nothing lost" : "\(report.lost_songs.count) LOST"))
        if let hog = report.hog_round {
            let submit = hog.submit_ms.map { "p50 \(ms($0.p50))  p99 \(ms($0.p99))  max \(ms($0.max))" } ?? "none"
            print(
                "Under a CPU hog of \(hog.busy_processes) busy processes: \(hog.songs) songs, \(format(hog.jobs_per_s, 0)) jobs/s, "
                    + "submit answer \(submit) (\(hog.busy_answers) busy answers); workers lost: \(hog.workers_lost.count), "
                    + "clients that gave up: \(hog.client_errors.count), jobs tried again: \(hog.retried_jobs), "
                    + "songs lost: \(hog.lost_songs)")
        }
    }

    private func format(_ value: Double, _ decimals: Int) -> String { String(format: "%.\(decimals)f", value) }
    private func ms(_ value: Double) -> String { format(value, 1) + " ms" }
    private func mib(_ value: Double) -> String { format(value, 1) + " MiB" }
}

/// Samples the coordinator every half second on a thread of its own: its resident memory and
/// how many jobs are queued or running.
final class LoadMonitor: Sendable {
    struct Sample: Sendable {
        /// Seconds since the monitor started.
        var at: Double
        var residentMiB: Double
        /// Jobs queued plus jobs running.
        var queued: Int
    }

    let residentBeforeMiB: Double
    /// When sampling began.
    let start = ContinuousClock.now
    private let state = Mutex<(samples: [Sample], error: String?)>(([], nil))
    private let stopping = Atomic<Bool>(false)
    private let queuedNow = Atomic<Int>(0)
    private let finished = Atomic<Bool>(false)

    var samples: [Sample] { state.withLock { $0.samples } }
    /// True while the last sample saw jobs queued or running.
    var isQueued: Bool { queuedNow.load(ordering: .relaxed) > 0 }

    init(server: ServeProcess) throws {
        residentBeforeMiB = PeakMemory.residentMiB(field: "VmRSS", pid: server.processID) ?? 0
        let frontend = server.endpoints.frontend
        let pid = server.processID
        Thread { [self] in
            defer { finished.store(true, ordering: .sequentiallyConsistent) }
            let client: TactusClient
            do {
                client = try TactusClient(server: frontend, timeout: .seconds(10))
            } catch {
                state.withLock { $0.error = "\(error)" }
                return
            }
            while !stopping.load(ordering: .sequentiallyConsistent) {
                do {
                    let status = try client.status().server
                    let queued = (status?.queue.values.reduce(0, +) ?? 0) + (status?.workers.filter { $0.job != nil }.count ?? 0)
                    queuedNow.store(queued, ordering: .relaxed)
                    let sample = Sample(
                        at: (ContinuousClock.now - self.start).seconds, residentMiB: PeakMemory.residentMiB(field: "VmRSS", pid: pid) ?? 0,
                        queued: queued)
                    state.withLock { $0.samples.append(sample) }
                } catch {
                    state.withLock { $0.error = "\(error)" }
                }
                Thread.sleep(forTimeInterval: 0.5)
            }
        }.start()
    }

    /// Waits until a sample taken after `instant` saw no job queued or running.
    func awaitDrained(after instant: ContinuousClock.Instant, timeout: Duration) throws {
        let after = (instant - start).seconds
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let (drained, error) = state.withLock { state in
                (state.samples.contains { $0.at > after && $0.queued == 0 }, state.error)
            }
            if let error { throw BenchFailure("status: \(error)") }
            if drained { return }
            Thread.sleep(forTimeInterval: 0.1)
        }
        throw BenchFailure("the queue did not drain within \(timeout)")
    }

    func stop() {
        stopping.store(true, ordering: .sequentiallyConsistent)
        while !finished.load(ordering: .sequentiallyConsistent) { Thread.sleep(forTimeInterval: 0.01) }
    }
}

/// A BPM range query every `interval` on a thread of its own, timing each answer and noting
/// whether jobs were queued when it was asked.
final class QueryStream: Sendable {
    struct Latency: Sendable {
        var ms: Double
        var whileQueued: Bool
    }

    let errors = ErrorLog()
    private let measured = Mutex<[Latency]>([])
    private let stopping = Atomic<Bool>(false)
    private let finished = Atomic<Bool>(false)

    var latencies: [Latency] { measured.withLock { $0 } }

    init(frontend: String, interval: Duration, monitor: LoadMonitor) {
        Thread { [self] in
            defer { finished.store(true, ordering: .sequentiallyConsistent) }
            let client: TactusClient
            do {
                client = try TactusClient(server: frontend, timeout: .seconds(10))
            } catch {
                errors.add("\(error)")
                return
            }
            var next = ContinuousClock.now
            var round = 0
            while !stopping.load(ordering: .sequentiallyConsistent) {
                let low = 80 + Double(round % 9) * 10
                round += 1
                let queued = monitor.isQueued
                let start = ContinuousClock.now
                do {
                    _ = try client.query(QueryRequest(minBpm: low, maxBpm: low + 10, limit: 50))
                    let elapsed = (ContinuousClock.now - start).seconds * 1000
                    measured.withLock { $0.append(Latency(ms: elapsed, whileQueued: queued)) }
                } catch {
                    errors.add("\(error)")
                    return
                }
                next += interval
                let wait = next - ContinuousClock.now
                if wait > .zero { Thread.sleep(forTimeInterval: wait.seconds) } else { next = ContinuousClock.now }
            }
        }.start()
    }

    func stop() {
        stopping.store(true, ordering: .sequentiallyConsistent)
        while !finished.load(ordering: .sequentiallyConsistent) { Thread.sleep(forTimeInterval: 0.01) }
    }
}

/// The `worker.lost` events of a server, read on a thread of its own until stopped.
final class WorkerLossWatch: Sendable {
    private let seen = Mutex<[String]>([])
    private let stopping = Atomic<Bool>(false)
    private let finished = Atomic<Bool>(false)

    /// Each loss as `worker-id: reason`.
    var lost: [String] { seen.withLock { $0 } }

    init(events: String) {
        let ready = DispatchSemaphore(value: 0)
        Thread { [self] in
            defer { finished.store(true, ordering: .sequentiallyConsistent) }
            do {
                let context = try ZMQContext(socketLinger: .zero)
                let subscriber = try EventSubscriber(endpoint: events, topics: ["worker:"], context: context)
                ready.signal()
                while !stopping.load(ordering: .sequentiallyConsistent) {
                    if case .workerLost(let body)? = try subscriber.next(timeout: .milliseconds(100)) {
                        seen.withLock { $0.append("\(body.workerId): \(body.reason ?? "no reason")") }
                    }
                }
            } catch {
                seen.withLock { $0.append("cannot watch the events: \(error)") }
                ready.signal()
            }
        }.start()
        ready.wait()
        // A subscription takes a moment to reach the publisher.
        Thread.sleep(forTimeInterval: 0.3)
    }

    func stop() {
        stopping.store(true, ordering: .sequentiallyConsistent)
        while !finished.load(ordering: .sequentiallyConsistent) { Thread.sleep(forTimeInterval: 0.01) }
    }
}
