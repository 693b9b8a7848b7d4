import Foundation
import Synchronization
import TactusProtocol

/// The slow steps of a request, taken off the poll loop: a few threads of the coordinator's
/// own run them (hashing a song, reading its header, writing its blob, a read-only query of
/// the library), so that the loop stays free to answer the next message at once.
///
/// The loop keeps one pool for reads and one for submissions, so that a read never waits
/// behind songs being hashed and written.
///
/// The loop hands over a piece of work with ``run(_:then:)``; the work runs on one of the
/// threads and must touch nothing of the loop's (it only gets what it captures, which must
/// be `Sendable`: the library, the blob store, the request). When it is over the threads
/// ring ``doorbell``, and the loop calls ``deliver()``, which runs each finished piece's
/// completion on the loop's own thread: that is where replies are sent and the queue changes.
///
/// Belongs to the loop's thread (only the work crosses threads).
final class BackgroundWork {
    /// Rings when a piece of work is over; the loop polls its descriptor.
    let doorbell: Doorbell
    private let queue: WorkQueue
    private var completions: [UInt64: (any Sendable) -> Void] = [:]
    private var nextID: UInt64 = 0

    /// Starts `threads` threads named `name-N`.
    init(threads: Int, name: String) throws(CoordinatorError) {
        doorbell = try Doorbell()
        queue = WorkQueue(doorbell: doorbell, threads: threads)
        for index in 0..<threads {
            let thread = Thread { [queue] in queue.serve() }
            thread.name = "\(name)-\(index)"
            thread.start()
        }
    }

    /// Pieces of work handed over whose completion has not run yet.
    var inFlight: Int { completions.count }

    /// The `busy` answer to a request refused because the pool has too much in hand.
    var busy: ErrorBody {
        ErrorBody(code: .busy, message: "the server has \(inFlight) such requests in hand; try again shortly", retryAfterMs: 200)
    }

    /// Runs `work` on a background thread, then `completion` with its result on the loop's
    /// thread (in a later ``deliver()``).
    func run<Value: Sendable>(_ work: @escaping @Sendable () -> Value, then completion: @escaping (Value) -> Void) {
        nextID += 1
        // The queue hands back exactly what `work` returned, so the cast cannot fail.
        completions[nextID] = { completion($0 as! Value) }
        queue.add(WorkQueue.Item(id: nextID, work: work))
    }

    /// Runs what ``deliver()`` runs, but only when some work is over: between the loop's other
    /// steps, without reading the doorbell's pipe for nothing.
    func deliverIfFinished() {
        if queue.hasFinished { deliver() }
    }

    /// Runs the completions of the work that is over (on the loop's thread), and silences the
    /// doorbell: for when the poll found it ringing.
    func deliver() {
        doorbell.silence()
        for (id, value) in queue.takeFinished() {
            completions.removeValue(forKey: id)?(value)
        }
    }

    deinit {
        queue.stop()
    }
}

/// The work waiting for a thread and the results waiting for the loop.
private final class WorkQueue: Sendable {
    struct Item: Sendable {
        let id: UInt64
        let work: @Sendable () -> any Sendable
    }

    private struct State {
        var waiting: [Item] = []
        var finished: [(UInt64, any Sendable)] = []
        var stopping = false
    }

    private let state = Mutex(State())
    private let available = DispatchSemaphore(value: 0)
    private let doorbell: Doorbell
    private let threads: Int

    init(doorbell: Doorbell, threads: Int) {
        self.doorbell = doorbell
        self.threads = threads
    }

    func add(_ item: Item) {
        state.withLock { $0.waiting.append(item) }
        available.signal()
    }

    var hasFinished: Bool { state.withLock { !$0.finished.isEmpty } }

    func takeFinished() -> [(UInt64, any Sendable)] {
        state.withLock { state in
            defer { state.finished.removeAll() }
            return state.finished
        }
    }

    /// Tells the threads to end once the waiting work is done.
    func stop() {
        state.withLock { $0.stopping = true }
        // Each waiting item has its wake-up already; one more per thread ends it.
        for _ in 0..<threads { available.signal() }
    }

    /// A thread's life: takes work until told to stop.
    func serve() {
        while true {
            available.wait()
            let next: Item? = state.withLock { state in
                state.waiting.isEmpty ? nil : state.waiting.removeFirst()
            }
            guard let next else {
                if state.withLock({ $0.stopping }) { return }
                continue
            }
            let value = next.work()
            state.withLock { $0.finished.append((next.id, value)) }
            doorbell.ring()
        }
    }
}
