import Foundation
import Logging
import Synchronization
import TactusLocalWorkers
import TactusProtocol

/// Service host processes (`tactus service-host`), started when first needed and kept for the
/// next call, each doing one ``HostedService`` call at a time under its own memory limit.
///
/// A call that breaks its host (a trap, an allocation failure past the memory limit, a message
/// that breaks the channel's format) fails with `worker-lost`, one that runs past its time
/// limit is stopped (SIGKILL) and fails with `timeout`; either way the host is replaced for the
/// next call and the caller goes on. Calls beyond ``Configuration/processes`` wait for a host.
/// A file that broke a host fails again at once, for a while, while it does not change
/// (``BrokenFiles``).
///
/// Called from the coordinator's background threads, several at a time; thread-safe.
public final class ServiceHostPool: Sendable {
    /// How the hosts are started and what a call may take.
    public struct Configuration: Sendable {
        /// The `tactus` executable.
        public var executable: String
        /// Its arguments (`service-host` and its limits).
        public var arguments: [String]
        /// Hosts running at once, at most.
        public var processes: Int
        /// How long one call of each service may take.
        public var timeLimits: [HostedService: Duration]
        /// The largest answer a host may send, in bytes.
        public var maxAnswerBytes: Int
        /// The memory a host may take beyond its own size, in MiB, for messages; nil: no limit.
        public var memoryLimitMegabytes: Int?

        public init(
            executable: String, arguments: [String], processes: Int, timeLimits: [HostedService: Duration],
            maxAnswerBytes: Int = 64 << 20, memoryLimitMegabytes: Int? = nil
        ) {
            self.executable = executable
            self.arguments = arguments
            self.processes = processes
            self.timeLimits = timeLimits
            self.maxAnswerBytes = maxAnswerBytes
            self.memoryLimitMegabytes = memoryLimitMegabytes
        }

        /// The time limit of `service` (a minute when none is set).
        func timeLimit(of service: HostedService) -> Duration { timeLimits[service] ?? .seconds(60) }
    }

    /// A host's answer: its JSON result and the bytes that came with it, if any.
    public struct Answer: Sendable {
        public var result: [UInt8]
        public var payload: [UInt8]?
    }

    public let configuration: Configuration
    private let logger: Logger
    private let hosts = Mutex(Hosts())
    private let restarts = Mutex(RestartPacing())
    private let broken = Mutex(BrokenFiles())
    private let free: DispatchSemaphore
    private let stopped = Atomic<Bool>(false)

    public init(configuration: Configuration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        free = DispatchSemaphore(value: max(1, configuration.processes))
    }

    /// The hosts waiting for a call, and the process ids of those doing one.
    private struct Hosts {
        var idle: [ServiceHost] = []
        var busy: Set<Int32> = []
    }

    /// When a host that failed may be replaced: at once after one failure of the last 10 s,
    /// then after a pause that doubles with each further one, from 50 ms to 1 s. Requests that
    /// break their host again and again (a file that crashes a library) would otherwise keep a
    /// core starting processes. The pause is taken by the call that needs the new host, holding
    /// its place in the pool: calls queued behind it wait for it too.
    struct RestartPacing {
        /// When the hosts failed, the last 10 s.
        var failures: [ContinuousClock.Instant] = []

        static let window = Duration.seconds(10)
        static let firstPause = Duration.milliseconds(50)
        static let longestPause = Duration.seconds(1)

        mutating func failed(at now: ContinuousClock.Instant) {
            failures.removeAll { now - $0 > Self.window }
            failures.append(now)
        }

        /// How long a new host must wait at `now`.
        func wait(at now: ContinuousClock.Instant) -> Duration {
            let recent = failures.filter { now - $0 <= Self.window }
            guard let last = recent.last, recent.count > 1 else { return .zero }
            let pause = min(Self.firstPause * (1 << min(recent.count - 2, 10)), Self.longestPause)
            return max(last + pause - now, .zero)
        }
    }

    deinit {
        for host in hosts.withLock({ $0.idle }) { host.end() }
    }

    /// The process ids of the hosts doing a call now.
    public var busyProcessIDs: Set<Int32> { hosts.withLock { $0.busy } }

    /// The process ids of the hosts waiting for a call.
    public var idleProcessIDs: [Int32] { hosts.withLock { $0.idle.map(\.processID) } }

    /// Starts `count` hosts now (at most ``Configuration/processes``), so that the first calls
    /// do not wait for a process to start; a host that cannot start is logged, and started
    /// again when a call needs it.
    public func prestart(_ count: Int) {
        for _ in 0..<min(count, configuration.processes) {
            do {
                let host = try ServiceHost(executable: configuration.executable, arguments: configuration.arguments)
                hosts.withLock { $0.idle.append(host) }
            } catch {
                logger.error("cannot start a service host", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Ends the idle hosts and refuses calls from now on (a call in progress ends as it ends).
    public func stop() {
        stopped.store(true, ordering: .sequentiallyConsistent)
        for host in hosts.withLock({ hosts in defer { hosts.idle.removeAll() }; return hosts.idle }) { host.end() }
    }

    /// Calls `service` with `arguments`, the client's bytes `payload` and the open files
    /// `descriptors` (they stay open here), in a host; `what` names the request in errors
    /// ("cadence of walk.csv").
    ///
    /// - Throws: the service's own error, or `worker-lost`, `timeout`, `unavailable` (no host
    ///   could be started, or the server is stopping).
    public func call<Arguments: Encodable>(
        _ service: HostedService, arguments: Arguments, payload: [UInt8]? = nil, descriptors: [Int32] = [], what: String
    ) throws(ErrorBody) -> Answer {
        let request = ServiceChannel.Message(
            parts: [Array(service.rawValue.utf8), try ServiceJSON.encode(arguments)] + (payload.map { [$0] } ?? []),
            descriptors: descriptors)
        let file = descriptors.first.flatMap { BrokenFiles.Key(descriptor: $0, service: service) }
        if let file, let (error, age) = broken.withLock({ $0.recall(file, at: .now) }) {
            throw ErrorBody(
                code: error.code,
                message: "\(error.message) [not tried again: this file broke a \(service.rawValue) host \(Int(age.components.seconds)) s "
                    + "ago and has not changed since; it is tried again once it changes, or "
                    + "\(Int(BrokenFiles.memory.components.seconds / 60)) minutes after]")
        }
        free.wait()
        defer { free.signal() }
        guard !stopped.load(ordering: .sequentiallyConsistent) else {
            throw ErrorBody(code: .unavailable, message: "\(what): the server is stopping", retryAfterMs: 5000)
        }
        let host = try takeHost(for: what)
        defer { _ = hosts.withLock { $0.busy.remove(host.processID) } }
        let limit = configuration.timeLimit(of: service)
        let answer: ServiceChannel.Message
        do throws(ServiceChannelError) {
            try host.channel.send(request)
            answer = try host.channel.receive(
                limits: ServiceChannel.Limits(maxParts: 3, maxBytes: configuration.maxAnswerBytes), deadline: .now + limit)
        } catch {
            let failure = failure(of: host, service: service, what: what, limit: limit, error)
            if let file, error != .timedOut || BrokenFiles.remembersTimeouts(of: service) {
                broken.withLock { $0.remember(file, error: failure, at: .now) }
            }
            throw failure
        }
        answer.closeDescriptors()
        // An answer is `ok` with a result (and perhaps bytes) or `error` with its body; a host
        // that sends anything else breaks the channel and is replaced.
        let status = answer.parts.first.map { String(decoding: $0, as: UTF8.self) }
        guard answer.descriptors.isEmpty, status == "ok" && answer.parts.count >= 2 || status == "error" && answer.parts.count == 2 else {
            let failure = failure(of: host, service: service, what: what, limit: limit, .invalid("an answer that is neither ok nor error"))
            if let file { broken.withLock { $0.remember(file, error: failure, at: .now) } }
            throw failure
        }
        hosts.withLock { $0.idle.append(host) }
        if status == "error" {
            throw try ServiceJSON.decode(ErrorBody.self, from: answer.parts[1], what: "the \(service.rawValue) service's error")
        }
        return Answer(result: answer.parts[1], payload: answer.parts.count > 2 ? answer.parts[2] : nil)
    }

    /// An idle host whose process still runs (one that ended meanwhile is replaced, its end
    /// logged), or a new one; marked busy.
    private func takeHost(for what: String) throws(ErrorBody) -> ServiceHost {
        while let host = hosts.withLock({ $0.idle.popLast() }) {
            guard host.process.isRunning else {
                logger.warning("a service host ended while idle", metadata: ["exit": "\(host.end())"])
                continue
            }
            hosts.withLock { _ = $0.busy.insert(host.processID) }
            return host
        }
        let pause = restarts.withLock { $0.wait(at: .now) }
        if pause > .zero {
            Thread.sleep(forTimeInterval: pause.seconds)
            // A host started after stop() would be left running.
            guard !stopped.load(ordering: .sequentiallyConsistent) else {
                throw ErrorBody(code: .unavailable, message: "\(what): the server is stopping", retryAfterMs: 5000)
            }
        }
        do {
            let host = try ServiceHost(executable: configuration.executable, arguments: configuration.arguments)
            logger.debug("started a service host", metadata: ["pid": "\(host.processID)"])
            hosts.withLock { _ = $0.busy.insert(host.processID) }
            return host
        } catch {
            logger.error("cannot start a service host", metadata: ["error": "\(error)"])
            throw ErrorBody(code: .unavailable, message: "\(what): the server cannot start a process for it: \(error)", retryAfterMs: 5000)
        }
    }

    /// The error of a call whose host failed: the host is ended (killed when it is still running).
    private func failure(
        of host: ServiceHost, service: HostedService, what: String, limit: Duration, _ error: ServiceChannelError
    ) -> ErrorBody {
        let timedOut = error == .timedOut
        let exit = host.end(killing: timedOut)
        restarts.withLock { $0.failed(at: .now) }
        logger.warning(
            "a service host failed",
            metadata: ["service": "\(service.rawValue)", "request": "\(what)", "error": "\(error)", "exit": "\(exit)"])
        if timedOut {
            return ErrorBody(
                code: .timeout,
                message: "\(what): stopped after \(Self.format(limit)) s, the server's time limit for \(service.rawValue)")
        }
        var cause = "its process \(exit)"
        if case .invalid(let detail) = error {
            cause = "its process sent \(detail)"
        } else if exit.killedBySignal && [SIGILL, SIGTRAP].contains(exit.status) {
            cause += " (it trapped: the request reached a fault of the server's; please report it)"
        } else if exit.killedBySignal && [SIGSEGV, SIGBUS].contains(exit.status) {
            cause += " (it crashed: the request reached a fault of tactus or of a library it uses, such as a tag too "
                + "deeply nested for TagLib; please report it)"
        } else if exit.killedBySignal, let megabytes = configuration.memoryLimitMegabytes {
            cause += " (out of memory under its \(megabytes) MiB limit?)"
        }
        return ErrorBody(code: .workerLost, message: "\(what): \(cause); nothing was stored")
    }

    /// Seconds as messages give them: whole from 10 on, to a tenth below.
    private static func format(_ duration: Duration) -> String {
        let seconds = duration.seconds
        return seconds >= 10 ? String(Int(seconds.rounded())) : String((seconds * 10).rounded() / 10)
    }
}

/// One `tactus service-host` process and the channel to it (its standard input).
final class ServiceHost: @unchecked Sendable {
    let process: Process
    let channel: ServiceChannel

    var processID: Int32 { process.processIdentifier }

    init(executable: String, arguments: [String]) throws {
        let (ours, theirs) = try ServiceChannel.pair()
        process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        // One OpenBLAS thread: a host does one call at a time.
        environment["OPENBLAS_NUM_THREADS"] = "1"
        // A host that traps ends at once: the Swift runtime's backtracer would keep it (and a
        // core) busy for seconds symbolicating, for every hostile request that reaches a trap.
        environment["SWIFT_BACKTRACE"] = "enable=no"
        process.environment = environment
        process.standardInput = FileHandle(fileDescriptor: theirs.descriptor, closeOnDealloc: false)
        try process.run()
        channel = ours
        withExtendedLifetime(theirs) {}
    }

    /// Ends the process (at once with SIGKILL when `killing`; otherwise by closing its channel,
    /// then SIGKILL when it has not ended within a second) and says how it ended.
    @discardableResult
    func end(killing: Bool = false) -> LocalWorkerPool.Exit {
        if killing && process.isRunning { kill(process.processIdentifier, SIGKILL) }
        if process.isRunning {
            shutdown(channel.descriptor, Int32(SHUT_RDWR))
            let deadline = ContinuousClock.now + .seconds(1)
            while process.isRunning && ContinuousClock.now < deadline { usleep(5000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
        process.waitUntilExit()
        return LocalWorkerPool.Exit(
            label: "service-host", processID: process.processIdentifier, status: process.terminationStatus,
            killedBySignal: process.terminationReason == .uncaughtSignal)
    }
}
