import Foundation
import TactusModel
import TactusProtocol

/// Songs submitted one after the other and, when events are followed, followed to the end.
///
/// Each song is subscribed to before it is sent, so none of its events is missed; a `busy`
/// answer is waited out while events keep being read. Events are not a reliable channel (a
/// subscriber that falls behind loses some), so while songs remain, their jobs are also asked
/// for with `status` every ``statusInterval``. Each song whose jobs are all final is handed to
/// the batch's handler once, with the labels (file names, say) it was submitted under.
///
/// ```swift
/// let batch = try SongBatch(client: client, events: "tcp://127.0.0.1:5557") { done in print(done.song) }
/// for file in files { _ = try batch.submit(SubmitRequest(name: file), audio: bytes(file), label: file) }
/// try batch.waitForAll()
/// ```
///
/// Like its client, a batch belongs to one thread at a time.
public final class SongBatch {
    /// A song whose every job is final.
    public struct Finished: Sendable {
        /// The song's id (its SHA-256).
        public var song: SongID
        /// The jobs this batch's submissions of the song got (those answered from the library
        /// included), every one final; other jobs of the song (earlier analyses, other
        /// clients' submissions) are left out.
        public var jobs: [JobInfo]
        /// The labels the song was submitted under, in order (the same bytes may be in several files).
        public var labels: [String]
    }

    /// The connection songs are submitted (and `status` asked) on.
    public let client: TactusClient
    /// How often the songs still followed are asked for with `status`.
    public let statusInterval: Duration
    private let subscriber: EventSubscriber?
    private let finished: (Finished) throws -> Void
    private let eventsRead: () -> Void
    /// Labels per song id still being followed.
    private var pending: [SongID: [String]] = [:]
    /// The jobs of this batch's submissions per song followed: the ids of those queued, and
    /// the answers from the library (job 0) as they came.
    private var submittedJobs: [SongID: (ids: Set<Int64>, answered: [JobInfo])] = [:]
    private let clock = ContinuousClock()
    private var lastStatusCheck: ContinuousClock.Instant

    /// A batch on `client`. With `events` (the server's events endpoint) songs are followed to
    /// the end, each handed to `finished`; without, songs are only submitted. `eventsRead` is
    /// called each time the waiting events have been read (to redraw a progress bar, say).
    public init(
        client: TactusClient, events: String?, statusInterval: Duration = .seconds(5), eventsRead: @escaping () -> Void = {},
        finished: @escaping (Finished) throws -> Void = { _ in }
    ) throws(ClientError) {
        self.client = client
        self.statusInterval = statusInterval
        self.eventsRead = eventsRead
        self.finished = finished
        subscriber = try events.map { endpoint throws(ClientError) in
            try EventSubscriber(endpoint: endpoint, context: client.context, curve: client.curve)
        }
        lastStatusCheck = clock.now
    }

    /// True when songs are followed to the end.
    public var isFollowing: Bool { subscriber != nil }

    /// Sends one song, waiting while the server is busy (reading events meanwhile), and when
    /// following, follows it under `label`. A song whose jobs are all final at once (answered
    /// from the library) is handed to the handler before this returns.
    ///
    /// - Throws: what ``TactusClient/submitWhileBusy(_:audio:pause:)`` throws (a refusal of
    ///   this song, such as `too-large`, leaves the batch as it was), and what the handler throws.
    public func submit(_ request: SubmitRequest, audio: [UInt8], label: String) throws -> SubmitResponse {
        let expected = SongID(hashing: audio)
        try subscriber?.subscribe(expected)
        let response: SubmitResponse
        do {
            response = try client.submitWhileBusy(request, audio: audio) { [self] _, wait in try pause(for: wait) }
        } catch {
            try subscriber?.unsubscribe(expected)
            throw error
        }
        guard subscriber != nil else { return response }
        if response.song != expected { try subscriber?.subscribe(response.song) }
        pending[response.song, default: []].append(label)
        var submitted = submittedJobs[response.song] ?? ([], [])
        submitted.ids.formUnion(response.jobs.map(\.job).filter { $0 != 0 })
        submitted.answered += response.jobs.filter { $0.job == 0 }
        submittedJobs[response.song] = submitted
        if response.jobs.allSatisfy(\.state.isFinal) { try finish(response.song, jobs: response.jobs) }
        try readEvents(for: .zero)
        return response
    }

    /// Reads the events that arrive within `duration` (only those already waiting with
    /// `.zero`), handing each song that finished to the handler.
    public func readEvents(for duration: Duration) throws {
        guard let subscriber else { return }
        let deadline = clock.now + duration
        while let event = try subscriber.next(timeout: max(deadline - clock.now, .zero)) {
            if case .songDone(let done) = event, pending[done.song] != nil {
                try finish(done.song, jobs: done.jobs)
            }
        }
        eventsRead()
    }

    /// When following: returns once every song submitted has finished, reading events, and
    /// asking `status` every ``statusInterval`` for (at most 50 of) the songs whose events may
    /// have been missed.
    public func waitForAll() throws {
        guard subscriber != nil else { return }
        while !pending.isEmpty {
            try readEvents(for: .milliseconds(500))
            if clock.now - lastStatusCheck >= statusInterval {
                lastStatusCheck = clock.now
                for song in pending.keys.sorted().prefix(50) {
                    let jobs = submitted(song, among: try client.status(song: song).jobs)
                    if !jobs.isEmpty, jobs.allSatisfy(\.state.isFinal) { try finish(song, jobs: jobs) }
                }
            }
        }
    }

    private func pause(for duration: Duration) throws {
        if subscriber != nil {
            try readEvents(for: duration)
        } else {
            Thread.sleep(forTimeInterval: duration.seconds)
        }
    }

    /// The jobs of `song` this batch submitted, from `jobs` (all of the song's, as `status` and
    /// `song.done` give them), with those answered from the library.
    private func submitted(_ song: SongID, among jobs: [JobInfo]) -> [JobInfo] {
        guard let submitted = submittedJobs[song] else { return jobs }
        return submitted.answered + jobs.filter { submitted.ids.contains($0.job) }
    }

    private func finish(_ song: SongID, jobs: [JobInfo]) throws {
        guard let labels = pending.removeValue(forKey: song) else { return }
        let ours = submitted(song, among: jobs)
        submittedJobs[song] = nil
        try subscriber?.unsubscribe(song)
        try finished(Finished(song: song, jobs: ours, labels: labels))
    }
}

extension JobState {
    /// Done, failed or cancelled: the job will not change any more.
    public var isFinal: Bool { self == .done || self == .failed || self == .cancelled }
}
