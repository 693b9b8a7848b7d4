import Foundation
import Synchronization
import TactusModel
import TactusProtocol

/// Songs submitted from several connections at once: `clients` threads, each with its own
/// ``TactusClient``, each taking the next song until none is left and waiting out `busy`
/// answers (``TactusClient/submitWhileBusy(_:audio:pause:)``). Every answer is timed.
///
/// ```swift
/// let submission = ConcurrentSubmission(count: paths.count, clients: 4, server: frontend) { index in
///     (SubmitRequest(name: names[index]), try bytes(of: paths[index]))
/// }
/// submission.wait()
/// ```
public final class ConcurrentSubmission: Sendable {
    /// One answer of the server: an accepted song, or a `busy` answer (`song` nil).
    public struct Answer: Sendable {
        /// The number of the song (`0..<count`).
        public var index: Int
        /// The accepted song's id; nil for a `busy` answer.
        public var song: SongID?
        /// From the request's sending to its answer.
        public var seconds: Double
        /// Songs accepted so far, this one included.
        public var acceptedSoFar: Int
    }

    private struct State {
        var accepted: [SongID] = []
        var answers: [Answer] = []
        var errors: [String] = []
    }

    private let state = Mutex(State())
    private let next = Atomic<Int>(0)
    private let running = Atomic<Int>(0)

    /// Starts submitting songs `0..<count`: `song(index)` makes the request and the bytes of
    /// song `index` (on the submitting thread, just before it is sent); `answered` sees each
    /// answer as it comes (on that thread).
    public init(
        count: Int, clients: Int, server: String, timeout: Duration = .seconds(30),
        song: @escaping @Sendable (Int) throws -> (request: SubmitRequest, audio: [UInt8]),
        answered: @escaping @Sendable (Answer) -> Void = { _ in }
    ) {
        for client in 0..<clients {
            running.add(1, ordering: .sequentiallyConsistent)
            Thread { [self] in
                defer { running.subtract(1, ordering: .sequentiallyConsistent) }
                do {
                    try submit(count: count, server: server, timeout: timeout, song: song, answered: answered)
                } catch {
                    state.withLock { $0.errors.append("client \(client): \(error)") }
                }
            }.start()
        }
    }

    /// The ids of the songs accepted so far, in the order they were.
    public var accepted: [SongID] { state.withLock { $0.accepted } }
    /// Every answer so far, `busy` ones included.
    public var answers: [Answer] { state.withLock { $0.answers } }
    /// What stopped a client (each then stops submitting).
    public var errors: [String] { state.withLock { $0.errors } }

    /// Waits until every client has finished.
    public func wait() {
        while running.load(ordering: .sequentiallyConsistent) > 0 { Thread.sleep(forTimeInterval: 0.01) }
    }

    private func submit(
        count: Int, server: String, timeout: Duration, song: (Int) throws -> (request: SubmitRequest, audio: [UInt8]),
        answered: (Answer) -> Void
    ) throws {
        let client = try TactusClient(server: server, timeout: timeout)
        while true {
            let index = next.add(1, ordering: .sequentiallyConsistent).oldValue
            guard index < count else { return }
            let (request, audio) = try song(index)
            var start = Date()
            let response = try client.submitWhileBusy(request, audio: audio) { _, wait in
                record(index: index, song: nil, seconds: Date().timeIntervalSince(start), answered)
                Thread.sleep(forTimeInterval: wait.seconds)
                start = Date()
            }
            record(index: index, song: response.song, seconds: Date().timeIntervalSince(start), answered)
        }
    }

    private func record(index: Int, song: SongID?, seconds: Double, _ answered: (Answer) -> Void) {
        let answer = state.withLock { state in
            if let song { state.accepted.append(song) }
            let answer = Answer(index: index, song: song, seconds: seconds, acceptedSoFar: state.accepted.count)
            state.answers.append(answer)
            return answer
        }
        answered(answer)
    }
}
