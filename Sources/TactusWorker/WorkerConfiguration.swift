import Foundation
import TactusAudio
import TactusDetector
import TactusLibraryRoots
import TactusProtocol
import TactusZMQ

/// What a ``Worker`` connects to, which detectors it offers, and its timing.
///
/// The defaults are the protocol's (`protocol/SPEC.md`, section 4): a heartbeat every 2.5 s,
/// a coordinator silent for 3 intervals is gone, reconnection waits 1 s doubling to 32 s.
///
/// ```swift
/// let configuration = try WorkerConfiguration(
///     endpoint: "tcp://127.0.0.1:5556",
///     detectors: [WorkerDetector(CombFilterDetector.self), WorkerDetector(AutocorrelationDetector.self)])
/// ```
///
/// A worker offering one detector speaks protocol version 1 (one job per JOB), one offering
/// several speaks version 2 (all of a song's jobs for its detectors in one JOB, decoded once).
public struct WorkerConfiguration: Sendable {
    /// The coordinator's backend ROUTER (`tcp://HOST:PORT`).
    public var endpoint: String
    /// The worker's name in the coordinator's logs, `status` and events.
    public var workerID: String
    /// The detectors this worker runs, each named once, with the resolved parameters the
    /// worker was started with, announced in READY (every job carries its own complete set).
    public var detectors: [WorkerDetector]
    /// How often the worker sends something (HEARTBEAT when it has nothing else to send).
    public var heartbeatInterval: Duration
    /// Intervals of silence after which the coordinator is taken for gone and the worker reconnects.
    public var liveness: Int
    /// How long to wait before each reconnection.
    public var backoff: ReconnectBackoff
    /// After a first stop request, how long the running job may take before the worker leaves anyway.
    public var shutdownGrace: Duration
    /// The size limits applied to the coordinator's messages.
    public var limits: ProtocolLimits
    /// The limits of decoding (shortest and longest song accepted).
    public var decoding: DecodingOptions
    /// How long one job's analysis may take before it stops and the job fails `timeout`
    /// (checked between decoded blocks); nil for no limit.
    public var analysisTimeLimit: Duration?
    /// How much lower than the process's the analysis thread's CPU priority is (a nice value,
    /// 0 to 19). Only the analysis is lowered: the thread that heartbeats, and ZeroMQ's, keep
    /// the process's priority, so that heartbeats are not starved on a loaded machine.
    public var analysisNiceness: Int32 = 0
    /// The memory, in MiB, this process may take for jobs beyond its own size once it is
    /// ready (``ResourceLimits/limitMemory(toCurrentSizePlus:)``); nil for no limit.
    public var jobMemoryMegabytes: Int?
    /// CURVE keys for a coordinator whose sockets are CURVE servers; nil for plain TCP.
    public var curve: CurveClientKeys?
    /// A file touched at every message from the coordinator and removed when the worker
    /// stops, for health checks (``HealthFile``); nil for none.
    public var healthFile: HealthFile?
    /// The library roots this worker shares with its coordinator (same host, same paths): it
    /// declares them in READY and opens the songs under them itself.
    public var libraryRoots: LibraryRoots = LibraryRoots([])

    public init(
        endpoint: String, workerID: String = WorkerConfiguration.defaultWorkerID(), detectors: [WorkerDetector],
        heartbeatInterval: Duration = Liveness.heartbeatInterval,
        liveness: Int = Liveness.heartbeats, backoff: ReconnectBackoff = ReconnectBackoff(),
        shutdownGrace: Duration = .seconds(60), limits: ProtocolLimits = .standard, decoding: DecodingOptions = .standard,
        analysisTimeLimit: Duration? = nil, curve: CurveClientKeys? = nil, healthFile: HealthFile? = nil
    ) {
        self.endpoint = endpoint
        self.workerID = workerID
        precondition(!detectors.isEmpty, "a worker offers at least one detector")
        self.detectors = detectors
        self.heartbeatInterval = heartbeatInterval
        self.liveness = liveness
        self.backoff = backoff
        self.shutdownGrace = shutdownGrace
        self.limits = limits
        self.decoding = decoding
        self.analysisTimeLimit = analysisTimeLimit
        self.curve = curve
        self.healthFile = healthFile
    }

    /// `HOST:PID`: unique among the processes running at one time.
    public static func defaultWorkerID() -> String {
        defaultWorkerID(processID: ProcessInfo.processInfo.processIdentifier)
    }

    /// The default id of the worker that runs as process `processID` on this host: how
    /// `tactus serve` names the local worker whose process it saw end.
    public static func defaultWorkerID(processID: Int32) -> String {
        // gethostname, not ProcessInfo.hostName, which may wait on name resolution.
        var buffer = [CChar](repeating: 0, count: 256)
        let host = gethostname(&buffer, buffer.count) == 0
            ? String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "localhost"
        return "\(host):\(processID)"
    }

    /// The silence after which the coordinator is taken for gone.
    public var expiry: Duration { heartbeatInterval * liveness }

    /// The protocol version the worker speaks first: 1 when it offers one detector (any
    /// coordinator takes it), 2 when it offers several.
    public var preferredVersion: ProtocolVersion { detectors.count > 1 ? .v2 : .v1 }

    /// The READY message announcing this worker in `version`: in version 1, only the first
    /// detector is offered.
    public func ready(version: ProtocolVersion) -> WorkerMessage {
        if version >= .v2 {
            return .offer(
                OfferBody(
                    workerId: workerID,
                    detectors: detectors.map { DetectorOffer(detector: DetectorInfo($0.type.descriptor), params: $0.parameters) },
                    roots: declaredRoots, identifies: declaredRoots == nil ? nil : true))
        }
        return .ready(
            ReadyBody(
                workerId: workerID, detector: DetectorInfo(detectors[0].type.descriptor), params: detectors[0].parameters,
                roots: declaredRoots))
    }

    /// The library roots READY declares: none when the worker shares none.
    private var declaredRoots: [String]? {
        libraryRoots.isEmpty ? nil : libraryRoots.directories
    }
}

/// A detector a worker offers, with the parameters it was started with.
public struct WorkerDetector: Sendable {
    public var type: any TempoDetector.Type
    /// Resolved against the detector's declarations.
    public var parameters: ParameterSet

    /// `type` with `parameters`, or its defaults.
    public init(_ type: any TempoDetector.Type, parameters: ParameterSet? = nil) {
        self.type = type
        // A registered detector's defaults always resolve.
        self.parameters = parameters ?? (try? type.descriptor.resolve()) ?? ParameterSet()
    }

    public var name: String { type.descriptor.name }
}
