import Foundation
import GRDB
import TactusDetector
import TactusModel

/// One job of the coordinator's queue: one song to analyse with one detector and parameters.
public struct JobRecord: Sendable, Hashable {
    /// Where a job is in its life. `queued` and `running` are active; the others are final.
    public enum State: String, Sendable, Hashable, CaseIterable {
        case queued, running, done, failed, cancelled

        /// True while the job still has work to do.
        public var isActive: Bool { self == .queued || self == .running }
    }

    public var id: Int64
    public var song: SongID
    /// The name the song was submitted with (for messages about the job).
    public var songName: String
    public var detector: String
    /// The parameters the client asked for (possibly none: the detector's defaults).
    public var params: ParameterSet
    public var state: State
    /// How many times the job was sent to a worker.
    public var attempts: Int
    /// The last worker the job was sent to.
    public var worker: String?
    /// Why the job failed or was cancelled.
    public var failure: AnalysisFailure?
}

/// What a client asks of one detector when it submits a song.
public struct JobRequest: Sendable, Hashable {
    public var detector: String
    public var params: ParameterSet

    public init(detector: String, params: ParameterSet = ParameterSet()) {
        self.detector = detector
        self.params = params
    }
}

/// The outcome of storing a job's result.
public struct JobCompletion: Sendable, Hashable {
    /// The song's consensus after the result.
    public var consensus: ConsensusTempo
    /// Every job of the song, in order; the song is finished when none is active.
    public var songJobs: [JobRecord]

    /// True when no job of the song is queued or running any more.
    public var songFinished: Bool { !songJobs.contains { $0.state.isActive } }
}

/// A job's successful result, to store with the others of its song
/// (``Library/finishJobs(_:durationS:envelope:beatGrid:)``).
public struct FinishedJob: Sendable {
    public var id: Int64
    /// The attempt the result answers: it is stored only while the job runs that attempt.
    public var attempt: Int
    public var result: AnalysisRecord

    public init(id: Int64, attempt: Int, result: AnalysisRecord) {
        self.id = id
        self.attempt = attempt
        self.result = result
    }
}

/// What became of one result given to ``Library/finishJobs(_:durationS:envelope:beatGrid:)``.
public enum FinishOutcome: Sendable, Equatable {
    /// Stored, and the job is done.
    case stored
    /// The job no longer runs that attempt (cancelled, or moved to another worker): nothing stored.
    case stale
    /// The library refused the result (a value out of range, windows beyond the song's end):
    /// nothing stored for it; the job is still running.
    case refused(StoreError)
}

extension Library {
    /// Records `song` (updating it if known) and queues a job for each request, in one
    /// transaction. A request for which an active job of the same song, detector and
    /// parameters exists is answered with that job instead of a new one. A song analysed in
    /// place comes with its `location`, recorded in the same transaction.
    public func enqueue(_ song: SongRecord, jobs requests: [JobRequest], location: SongLocation? = nil) throws(StoreError) -> [JobRecord] {
        try song.validate()
        if let location { try Self.checkLocation(location) }
        return try write { db in
            let key = try Self.upsert(song, db)
            if let location { try Self.record(location, songKey: key, db) }
            let now = StoredDate.now
            var jobs = [JobRecord]()
            for request in requests {
                let paramsJSON = request.params.canonicalJSON
                if let active = try JobRecord.fetch(
                    db, where: "j.song_id = ? AND j.detector = ? AND j.params_json = ? AND j.state IN ('queued', 'running')",
                    arguments: [key, request.detector, paramsJSON]
                ).first {
                    jobs.append(active)
                    continue
                }
                try db.executeCached(
                    sql: """
                        INSERT INTO jobs (song_id, detector, params_json, state, attempts, created_at, updated_at)
                        VALUES (?, ?, ?, 'queued', 0, ?, ?)
                        """,
                    arguments: [key, request.detector, paramsJSON, now, now])
                jobs.append(
                    JobRecord(
                        id: db.lastInsertedRowID, song: song.id, songName: song.fileName, detector: request.detector,
                        params: request.params,
                        state: .queued, attempts: 0, worker: nil, failure: nil))
            }
            return jobs
        }
    }

    /// Prepares the queue after a start: jobs left `running` by a previous run are queued
    /// again. Returns every queued job, oldest first.
    public func recoverJobs() throws(StoreError) -> [JobRecord] {
        try write { db in
            try db.executeCached(sql: "UPDATE jobs SET state = 'queued', updated_at = ? WHERE state = 'running'", arguments: [StoredDate.now])
            return try JobRecord.fetch(db, where: "j.state = 'queued'", arguments: [])
        }
    }

    /// Marks job `id` as sent to `worker`; returns the new attempt number.
    public func startJob(_ id: Int64, worker: String) throws(StoreError) -> Int {
        try write { db in
            try db.executeCached(
                sql: """
                    UPDATE jobs SET state = 'running', attempts = attempts + 1, worker = ?, updated_at = ?
                    WHERE id = ? AND state = 'queued'
                    """,
                arguments: [worker, StoredDate.now, id])
            guard db.changesCount == 1 else { throw StoreError.invalidValue(field: "job", value: "\(id)", accepted: "a queued job") }
            return try Int.fetchOne(db.cachedStatement(sql: "SELECT attempts FROM jobs WHERE id = ?"), arguments: [id])!
        }
    }

    /// Puts a running job back in the queue (its worker died or went silent).
    public func requeueJob(_ id: Int64) throws(StoreError) {
        try write { db in
            try db.executeCached(
                sql: "UPDATE jobs SET state = 'queued', updated_at = ? WHERE id = ? AND state = 'running'",
                arguments: [StoredDate.now, id])
        }
    }

    /// Stores the result of attempt `attempt` of job `id` and marks the job done, in one
    /// transaction with the song's new consensus; also records the song's exact duration and
    /// envelope and its beat grid when the worker measured them. Returns nil, storing nothing, when the job is
    /// not running that attempt any more (a stale result). (``finishJobs(_:durationS:envelope:beatGrid:)``
    /// for one job.)
    public func finishJob(
        _ id: Int64, attempt: Int, result: AnalysisRecord, durationS: Double? = nil, envelope: EnergyEnvelope? = nil,
        beatGrid: BeatGrid? = nil
    ) throws(StoreError) -> JobCompletion? {
        let finished = try finishJobs(
            [FinishedJob(id: id, attempt: attempt, result: result)], durationS: durationS, envelope: envelope, beatGrid: beatGrid)
        switch finished.outcomes[0] {
        case .stored: return finished.completion
        case .stale: return nil
        case .refused(let error): throw error
        }
    }

    /// Stores the results of jobs of one song (a worker's RESULT) in one transaction, with one
    /// new consensus: each result as ``finishJob(_:attempt:result:durationS:envelope:beatGrid:)``
    /// stores it, and each on its own (a stale one or one the library refuses takes nothing
    /// from the others). The song's exact duration, envelope and beat grid are recorded when at
    /// least one result is stored. The outcomes are in the order of `jobs`; the completion is
    /// nil when nothing was stored.
    ///
    /// - Throws: `invalidValue` when the jobs are not all of one song, or the beat grid is
    ///   malformed (nothing is stored then).
    public func finishJobs(
        _ jobs: [FinishedJob], durationS: Double? = nil, envelope: EnergyEnvelope? = nil, beatGrid: BeatGrid? = nil
    ) throws(StoreError) -> (outcomes: [FinishOutcome], completion: JobCompletion?) {
        try SongRecord.check(beatGrid)
        return try write { db -> (outcomes: [FinishOutcome], completion: JobCompletion?) in
            var outcomes: [FinishOutcome] = []
            var songKey: Int64?
            /// What the results must lie within (read once, with the first job's song); 0: no check.
            var duration: Double?
            for finished in jobs {
                guard let job = try JobRecord.fetch(db, where: "j.id = ?", arguments: [finished.id]).first,
                    job.state == .running, job.attempts == finished.attempt
                else {
                    outcomes.append(.stale)
                    continue
                }
                let key = try Self.songKey(job.song, db)
                guard songKey == nil || songKey == key else {
                    throw StoreError.invalidValue(field: "job", value: "\(finished.id)", accepted: "a job of the same song as the others")
                }
                songKey = key
                let limit = try duration ?? Self.resultDurationLimit(measured: durationS, songKey: key, db)
                duration = limit
                do throws(StoreError) {
                    try finished.result.validate()
                    if limit > 0 { try finished.result.checkWithin(durationS: limit) }
                } catch {
                    outcomes.append(.refused(error))
                    continue
                }
                var params = ParameterText()
                try Self.upsert(finished.result, songKey: key, params: &params, db)
                try db.executeCached(
                    sql: "UPDATE jobs SET state = 'done', error_code = NULL, error_message = NULL, updated_at = ? WHERE id = ?",
                    arguments: [StoredDate.now, finished.id])
                outcomes.append(.stored)
            }
            guard let key = songKey, outcomes.contains(.stored) else { return (outcomes, nil) }
            if let durationS, durationS.isFinite, durationS >= 0 {
                try db.executeCached(sql: "UPDATE songs SET duration_s = ? WHERE id = ?", arguments: [durationS, key])
            }
            // An envelope longer than the song (or than any song) is left out, the results kept.
            if let envelope, PackedEnvelope.fits(envelope, durationS: (duration ?? 0) > 0 ? duration : nil) {
                try db.executeCached(
                    sql: "UPDATE songs SET envelope = ?, envelope_hop_s = ? WHERE id = ?",
                    arguments: [PackedEnvelope.encode(envelope), envelope.hopS, key])
            }
            if let beatGrid {
                try db.executeCached(
                    sql: "UPDATE songs SET beat_grid_json = ? WHERE id = ?", arguments: [StoredJSON.encode(beatGrid), key])
            }
            let consensus = try Self.refreshConsensus(songKey: key, advisory: advisoryDetectors, db)
            let ended = zip(jobs, outcomes).filter { $0.1 == .stored }.map(\.0.id)
            try Self.forgetOldFinishedJobs(songKey: key, keeping: ended, db)
            return (outcomes, JobCompletion(consensus: consensus, songJobs: try JobRecord.fetch(db, where: "j.song_id = ?", arguments: [key])))
        }
    }

    /// What a result must lie within: the song's duration as the worker measured it, else (a
    /// version-1 worker may not say) the stored one, which may be a header's estimate: an MP3's
    /// first frame can be 2.5 times the bit rate of the rest, so 4 times it plus a minute; 0
    /// (no check) when neither is known.
    private static func resultDurationLimit(measured: Double?, songKey: Int64, _ db: Database) throws -> Double {
        if let measured, measured.isFinite, measured >= 0 { return measured }
        let stored = try Double.fetchOne(db.cachedStatement(sql: "SELECT duration_s FROM songs WHERE id = ?"), arguments: [songKey]) ?? 0
        return stored > 0 ? 4 * stored + 60 : 0
    }

    /// Ends job `id` as failed (or cancelled) with `failure`, storing `analysis` (a failed
    /// analysis record) when given. Only an active job changes; returns the completion, or nil
    /// when the job was no longer active.
    public func endJob(
        _ id: Int64, state: JobRecord.State, failure: AnalysisFailure, analysis: AnalysisRecord? = nil
    ) throws(StoreError) -> JobCompletion? {
        precondition(state == .failed || state == .cancelled, "a job ends failed or cancelled")
        try analysis?.validate()
        return try write { db -> JobCompletion? in
            guard let job = try JobRecord.fetch(db, where: "j.id = ?", arguments: [id]).first, job.state.isActive else {
                return nil
            }
            let key = try Self.songKey(job.song, db)
            if let analysis {
                var params = ParameterText()
                try Self.upsert(analysis, songKey: key, params: &params, db)
            }
            try db.executeCached(
                sql: "UPDATE jobs SET state = ?, error_code = ?, error_message = ?, updated_at = ? WHERE id = ?",
                arguments: [state.rawValue, failure.code.rawValue, failure.message, StoredDate.now, id])
            let consensus = try Self.refreshConsensus(songKey: key, advisory: advisoryDetectors, db)
            try Self.forgetOldFinishedJobs(songKey: key, keeping: [id], db)
            return JobCompletion(consensus: consensus, songJobs: try JobRecord.fetch(db, where: "j.song_id = ?", arguments: [key]))
        }
    }

    /// The most finished jobs (done, failed, cancelled) a song keeps, the last to finish; older
    /// ones are forgotten as others finish (their analyses stay). With the coordinator's bound on a song's
    /// active jobs, this bounds what every result of the song reads and its `song.done` event
    /// lists: a client resubmitting one song with ever new parameters had given it 74,000 jobs,
    /// each result reading them all on the coordinator's loop (attack round 7, H2 and H3).
    public static let maxFinishedJobsPerSong = 128

    /// Deletes the finished jobs of song `key` beyond the ``maxFinishedJobsPerSong`` that
    /// finished last (by the time they ended, then by id), never those in `ended` (the jobs
    /// that have just ended, however old: the clients waiting for them read them).
    static func forgetOldFinishedJobs(songKey key: Int64, keeping ended: [Int64], _ db: Database) throws {
        // Most songs have a few jobs: counted by a prepared statement, they cost no delete.
        let finished = try Int.fetchOne(
            db.cachedStatement(sql: "SELECT count(*) FROM jobs WHERE song_id = ? AND state IN ('done', 'failed', 'cancelled')"),
            arguments: [key]) ?? 0
        guard finished > maxFinishedJobsPerSong else { return }
        // Integers only: the list is written into the statement.
        let just = ended.isEmpty ? "" : "AND id NOT IN (\(ended.map(String.init).joined(separator: ", ")))"
        try db.execute(
            sql: """
                DELETE FROM jobs WHERE id IN (
                    SELECT id FROM jobs WHERE song_id = :key AND state IN ('done', 'failed', 'cancelled') \(just)
                    ORDER BY updated_at DESC, id DESC LIMIT -1 OFFSET :kept)
                """,
            arguments: ["key": key, "kept": max(maxFinishedJobsPerSong - ended.count, 0)])
    }

    /// The detector and parameters (canonical JSON) of each job of `song` queued or running.
    public func activeJobs(of song: SongID) throws(StoreError) -> [(detector: String, paramsJSON: String)] {
        try readStatement { db in
            try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT detector, params_json FROM jobs WHERE song_id = (SELECT id FROM songs WHERE sha256 = ?)
                            AND state IN ('queued', 'running')
                        """),
                arguments: [song]
            ).map { ($0["detector"], $0["params_json"]) }
        }
    }

    /// The job `id`, if it exists.
    public func job(_ id: Int64) throws(StoreError) -> JobRecord? {
        try read { db in try JobRecord.fetch(db, where: "j.id = ?", arguments: [id]).first }
    }

    /// Every job of `song`, oldest first.
    public func jobs(of song: SongID) throws(StoreError) -> [JobRecord] {
        try read { db in try JobRecord.fetch(db, where: "s.sha256 = ?", arguments: [song]) }
    }

    /// Every job the library has as running.
    public func runningJobs() throws(StoreError) -> [JobRecord] {
        try read { db in try JobRecord.fetch(db, where: "j.state = 'running'", arguments: []) }
    }

    /// The songs with a queued or running job: those whose bytes are still needed.
    public func songsWithActiveJobs() throws(StoreError) -> Set<SongID> {
        try read { db in
            Set(
                try String.fetchAll(
                    db,
                    sql: "SELECT DISTINCT s.sha256 FROM jobs j JOIN songs s ON s.id = j.song_id WHERE j.state IN ('queued', 'running')"
                ).map { try SongID.stored($0) })
        }
    }

    /// The number of queued jobs per detector.
    public func queuedJobCounts() throws(StoreError) -> [String: Int] {
        try read { db in
            var counts = [String: Int]()
            for row in try Row.fetchAll(db, sql: "SELECT detector, count(*) FROM jobs WHERE state = 'queued' GROUP BY detector") {
                counts[row[0]] = row[1]
            }
            return counts
        }
    }
}

extension JobRecord {
    static func fetch(_ db: Database, where condition: String, arguments: StatementArguments) throws -> [JobRecord] {
        // A fixed set of conditions, so the statement cache stays small.
        let rows = try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT j.id, s.sha256, j.detector, j.params_json, j.state, j.attempts, j.worker, j.error_code, j.error_message,
                        s.file_name
                    FROM jobs j JOIN songs s ON s.id = j.song_id
                    WHERE \(condition) ORDER BY j.id
                    """),
            arguments: arguments)
        return rows.map { row in
            let code: String? = row[7]
            let message: String? = row[8]
            return JobRecord(
                id: row[0],
                song: SongID(row[1] as String)!,
                songName: row[9],
                detector: row[2],
                params: (try? JSONDecoder().decode(ParameterSet.self, from: Data((row[3] as String).utf8))) ?? ParameterSet(),
                state: State(rawValue: row[4]) ?? .failed,
                attempts: row[5],
                worker: row[6],
                failure: code.map { AnalysisFailure(code: ErrorCode(rawValue: $0), message: message ?? "") })
        }
    }
}
