import ArgumentParser
import Foundation
import Logging
import TactusAnalysis
import TactusAudio
import TactusDetector
import TactusProtocol
import TactusWorker

/// `tactus worker`: offers one detector to a coordinator and analyses the songs it sends.
struct WorkerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "worker",
        abstract: "Analyse songs for a coordinator with one detector.",
        discussion: """
            Connects to the coordinator's backend, announces the detector with its version and \
            parameters, and analyses one song at a time on a separate thread while heartbeats \
            go on every 2.5 s. A song that does not decode is a failed job with the audio \
            error's code, never the end of the worker. When the coordinator is silent for 3 \
            heartbeats, or disconnects it, the worker reconnects after 1 s, doubling up to 32 s.

            SIGINT or SIGTERM: the current job is finished (for at most --grace seconds), the \
            coordinator is told, and the worker exits 0; a second signal leaves at once. Logs \
            go to standard error.

            With --max-memory-mb the worker limits its own address space (setrlimit RLIMIT_AS) \
            before it connects: a song that needs more ends the process, and so costs one \
            failed job. With --nice it lowers its CPU priority, so that a coordinator on the same \
            machine answers its clients first. A coordinator using CURVE needs --curve-server-key and \
            --curve-secret-key (or $TACTUS_CURVE_SERVER_KEY and $TACTUS_CURVE_SECRET_KEY).
            """
    )

    @Option(help: ArgumentHelp("The coordinator's backend.", valueName: "endpoint"))
    var connect = "tcp://127.0.0.1:5556"

    @Option(help: ArgumentHelp(
        "The detector to offer (see `tactus detectors`).", valueName: "name"))
    var detector: String

    @Option(name: .customLong("param"), help: ArgumentHelp(
        "A parameter announced as the worker's own, for example preset=classic (repeatable). Each job carries its own parameters.",
        valueName: "key=value"))
    var parameters: [String] = []

    @Option(help: ArgumentHelp("The worker's name in the coordinator's status and events (default HOST:PID).", valueName: "id"))
    var id: String?

    @Option(help: ArgumentHelp(
        "Seconds between heartbeats (at most 2.5, the protocol's interval; the coordinator is taken for gone after 3 silent intervals).",
        valueName: "seconds"))
    var heartbeatInterval = 2.5

    @Option(help: ArgumentHelp("Seconds the current job may take after SIGINT or SIGTERM.", valueName: "seconds"))
    var grace = 60.0

    @Option(help: ArgumentHelp("Address-space limit of this process in MiB (setrlimit RLIMIT_AS; 0: none).", valueName: "MiB"))
    var maxMemoryMb = 0

    @Option(help: ArgumentHelp("Lower this worker's CPU priority by this nice value (0 to 19; 0: unchanged).", valueName: "n"))
    var nice: Int32 = 0

    @Option(name: .customLong("max-duration-s"), help: ArgumentHelp("The longest song analysed, in seconds (too-long above it).", valueName: "seconds"))
    var maxDurationS = 7200.0

    @OptionGroup var curve: CurveClientOptions

    @Option(help: ArgumentHelp("Log level: trace, debug, info, notice, warning, error or critical.", valueName: "level"))
    var logLevel = "info"

    func validate() throws {
        _ = try setup()
    }

    func run() throws {
        var (configuration, level) = try setup()
        if nice > 0 { try ResourceLimits.lowerPriority(niceness: nice) }
        if maxMemoryMb > 0 { try ResourceLimits.limitMemory(megabytes: maxMemoryMb) }
        configuration.curve = try curve.keys()
        var logger = Logger(label: "tactus.worker")
        logger.logLevel = level
        let worker = Worker(configuration: configuration, logger: logger)
        // Signals are taken from their default action and handled on a queue: the first stop
        // lets the job finish, the second leaves at once.
        let sources = [SIGINT, SIGTERM].map { signalNumber in
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler { worker.stop() }
            source.resume()
            return source
        }
        try withExtendedLifetime(sources) { try worker.run() }
    }

    /// The worker's configuration and log level from the options, or a usage error naming the culprit.
    private func setup() throws -> (WorkerConfiguration, Logger.Level) {
        guard let type = BuiltinDetectors.registry.detectorTypes.first(where: { $0.descriptor.name == detector }) else {
            throw ValidationError(
                ParameterError.unknownDetector(name: detector, known: BuiltinDetectors.registry.names).description)
        }
        let resolved: ParameterSet
        do {
            resolved = try type.descriptor.resolve(assignments: parameters)
        } catch {
            throw ValidationError(String(describing: error))
        }
        guard connect.contains("://") else {
            throw ValidationError("--connect takes an endpoint such as tcp://HOST:PORT, not '\(connect)'.")
        }
        guard heartbeatInterval > 0, heartbeatInterval <= Liveness.heartbeatInterval.seconds else {
            throw ValidationError("--heartbeat-interval must be above 0 and at most 2.5 seconds (got \(heartbeatInterval)).")
        }
        guard (0...19).contains(nice) else { throw ValidationError("--nice must be between 0 and 19 (got \(nice)).") }
        guard maxMemoryMb >= 0 else { throw ValidationError("--max-memory-mb must not be negative (got \(maxMemoryMb)).") }
        guard maxDurationS > 0 else { throw ValidationError("--max-duration-s must be positive (got \(maxDurationS)).") }
        guard grace >= 0 else { throw ValidationError("--grace must not be negative (got \(grace)).") }
        guard let level = Logger.Level(rawValue: logLevel) else {
            throw ValidationError("--log-level must be one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")).")
        }
        if let id {
            guard (1...128).contains(id.utf8.count) else { throw ValidationError("--id must have 1 to 128 bytes.") }
        }
        let configuration = WorkerConfiguration(
            endpoint: connect, workerID: id ?? WorkerConfiguration.defaultWorkerID(), detector: type, parameters: resolved,
            heartbeatInterval: .milliseconds(Int64((heartbeatInterval * 1000).rounded())), shutdownGrace: .seconds(grace),
            decoding: DecodingOptions(maximumSeconds: maxDurationS))
        return (configuration, level)
    }
}
