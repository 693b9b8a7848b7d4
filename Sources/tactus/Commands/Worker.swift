import ArgumentParser
import Foundation
import Logging
import TactusAnalysis
import TactusAudio
import TactusDetector
import TactusLibraryRoots
import TactusProtocol
import TactusWorker

extension Tactus {
    /// `tactus worker`: offers detectors to a coordinator and analyses the songs it sends.
    struct Worker: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "worker",
            abstract: "Analyse songs for a coordinator with one or more detectors.",
            discussion: """
                Connects to the coordinator's backend, announces the detectors (every built-in one \
                unless --detector names some) with their versions and parameters, and analyses one \
                song at a time on a separate thread while heartbeats \
                go on every 2.5 s. A worker offering several detectors gets all of a song's jobs for \
                them at once and decodes the song once for all of them (protocol version 2; with a \
                coordinator that speaks only version 1 it offers its first detector alone). A song \
                that does not decode is a failed job with the audio \
                error's code, never the end of the worker. When the coordinator is silent for 3 \
                heartbeats, or disconnects it, the worker reconnects after 1 s, doubling up to 32 s.

                SIGINT or SIGTERM: the current job is finished (for at most --grace seconds), the \
                coordinator is told, and the worker exits 0; a second signal leaves at once. Logs \
                go to standard error.

                With --max-memory-mb the worker limits its own address space (setrlimit RLIMIT_AS, \
                with malloc kept to one arena so an idle worker stays near 140 MiB) before it \
                connects: a song that needs more ends the process, and so costs one failed job; a \
                job needs about 2.5 times the song's bytes. With --max-analysis-seconds an analysis \
                still running after that time (checked between decoded blocks) stops, and its job \
                fails with the code timeout, naming the song and the limit. With --nice it lowers the \
                CPU priority of its analysis thread, so that a coordinator on the same machine \
                answers its clients first; its heartbeats keep the normal priority, so that they \
                stay on time on a loaded machine. \
                A coordinator using CURVE needs --curve-server-key and \
                --curve-secret-key (or $TACTUS_CURVE_SERVER_KEY and $TACTUS_CURVE_SECRET_KEY).

                With --health-file the worker sets the file's modification time at every message \
                from the coordinator (at least every 2.5 s while connected) and removes it when it \
                stops; `tactus health --file PATH` tells from its age whether the worker is in \
                touch with its coordinator (a container health check).

                `tactus serve` starts its local workers with --parent-pid: such a worker exits \
                within half a second once that server has ended (even by kill -9), so it never \
                joins another coordinator.
                """
        )

        @Option(help: ArgumentHelp("The coordinator's backend.", valueName: "endpoint"))
        var connect = "tcp://127.0.0.1:5556"

        @Option(help: ArgumentHelp(
            "A detector to offer (repeatable; see `tactus detectors`). Default: every built-in detector.", valueName: "name"))
        var detector: [String] = []

        @Option(name: .customLong("param"), help: ArgumentHelp(
            "A parameter announced as the worker's own, for example preset=classic (repeatable), given to every offered "
                + "detector that declares it. Each job carries its own parameters.",
            valueName: "key=value"))
        var parameters: [String] = []

        @Option(help: ArgumentHelp("The worker's name in the coordinator's status and events (default HOST:PID).", valueName: "id"))
        var id: String?

        @Option(help: ArgumentHelp(
            "Seconds between heartbeats (at most 2.5, the protocol's interval; the coordinator is taken for gone after 3 "
                + "silent intervals).",
            valueName: "seconds"))
        var heartbeatInterval = 2.5

        @Option(help: ArgumentHelp("Seconds the current job may take after SIGINT or SIGTERM.", valueName: "seconds"))
        var grace = 60.0

        @Option(help: ArgumentHelp(
            "Memory this worker may take for jobs, in MiB, beyond its own size once it is ready (setrlimit RLIMIT_AS at "
                + "that size plus this; 0: none). Past it the worker ends, and its job is tried again elsewhere.",
            valueName: "MiB"))
        var maxMemoryMb = 0

        @Option(help: ArgumentHelp(
            "Seconds one job's analysis may take before it stops and the job fails 'timeout' (0: no limit).",
            valueName: "seconds"))
        var maxAnalysisSeconds = 0.0

        @Option(help: ArgumentHelp(
            "Lower the CPU priority of this worker's analysis by this nice value (0 to 19; 0: unchanged).", valueName: "n"))
        var nice: Int32 = 0

        @Option(name: .customLong("max-duration-s"), help: ArgumentHelp(
            "The longest song analysed, in seconds (too-long above it).", valueName: "seconds"))
        var maxDurationS = 7200.0

        @Flag(inversion: .prefixedNo, help: ArgumentHelp(
            "Decode each song on a thread of its own, a few blocks ahead of the detectors: a song is analysed in about 25 % "
                + "less time where a core is free, for some 5 % more CPU. `tactus serve` turns it off when it starts as many "
                + "local workers as there are cores."))
        var readAhead = true

        @OptionGroup var curve: CurveClientOptions

        @Option(help: ArgumentHelp(
            "A file touched at every message from the coordinator and removed at exit (see `tactus health`).", valueName: "path"))
        var healthFile: String?

        @Option(
            name: .customLong("library-root"),
            help: ArgumentHelp(
                "A library root of the coordinator that this worker reads at the same path on the same host (repeatable): "
                    + "its songs are opened here instead of being sent.", valueName: "dir"))
        var libraryRoots: [String] = []

        @Option(help: ArgumentHelp("Log level: trace, debug, info, notice, warning, error or critical.", valueName: "level"))
        var logLevel = "info"

        @Option(help: ArgumentHelp(
            "Exit when process PID (the tactus serve that started this worker) is no longer its parent.", valueName: "pid"))
        var parentPid: Int32?

        func validate() throws {
            _ = try setup()
        }

        func run() throws {
            var (configuration, level) = try setup()
            configuration.analysisNiceness = nice
            if maxMemoryMb > 0 {
                // Before any thread starts; the limit itself is set once the worker is ready.
                try ResourceLimits.useOneMallocArena()
                configuration.jobMemoryMegabytes = maxMemoryMb
            }
            configuration.curve = try curve.keys()
            var logger = Logger(label: "tactus.worker")
            logger.logLevel = level
            let parentWatch = try parentPid.map { parent in
                try ParentWatch(parent: parent) { [logger] in
                    logger.error("the tactus serve that started this worker has exited; exiting", metadata: ["parent": "\(parent)"])
                    Foundation.exit(ExitCode.failure.rawValue)
                }
            }
            let worker = TactusWorker.Worker(configuration: configuration, logger: logger)
            // Signals are taken from their default action and handled on a queue: the first stop
            // lets the job finish, the second leaves at once.
            let sources = [SIGINT, SIGTERM].map { signalNumber in
                signal(signalNumber, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
                source.setEventHandler { worker.stop() }
                source.resume()
                return source
            }
            try withExtendedLifetime((sources, parentWatch)) { try worker.run() }
        }

        /// The worker's configuration and log level from the options, or a usage error naming the culprit.
        private func setup() throws -> (WorkerConfiguration, Logger.Level) {
            let registry = BuiltinDetectors.registry
            var types: [any TempoDetector.Type] = []
            for name in detector.isEmpty ? registry.names : detector {
                guard let type = registry.detectorTypes.first(where: { $0.descriptor.name == name }) else {
                    throw ValidationError(ParameterError.unknownDetector(name: name, known: registry.names).description)
                }
                guard !types.contains(where: { $0.descriptor.name == name }) else {
                    throw ValidationError("--detector \(name) is given twice.")
                }
                types.append(type)
            }
            var offers: [WorkerDetector] = []
            do {
                for type in types {
                    // With several detectors, each gets the assignments it declares.
                    let own = types.count == 1 ? parameters : parameters.filter { assignment in
                        let key = assignment.split(separator: "=", maxSplits: 1).first.map(String.init) ?? assignment
                        return type.descriptor.parameters.contains { $0.name == key }
                    }
                    offers.append(WorkerDetector(type, parameters: try type.descriptor.resolve(assignments: own)))
                }
            } catch {
                throw ValidationError(String(describing: error))
            }
            if types.count > 1, let stray = parameters.first(where: { assignment in
                let key = assignment.split(separator: "=", maxSplits: 1).first.map(String.init) ?? assignment
                return !types.contains { type in type.descriptor.parameters.contains { $0.name == key } }
            }) {
                throw ValidationError("--param \(stray): no offered detector declares this parameter.")
            }
            guard connect.contains("://") else {
                throw ValidationError("--connect takes an endpoint such as tcp://HOST:PORT, not '\(connect)'.")
            }
            guard heartbeatInterval > 0, heartbeatInterval <= Liveness.heartbeatInterval.seconds else {
                throw ValidationError("--heartbeat-interval must be above 0 and at most 2.5 seconds (got \(heartbeatInterval)).")
            }
            guard maxMemoryMb == 0 || maxMemoryMb >= ResourceLimits.minimumJobMegabytes else {
                throw ValidationError(
                    "--max-memory-mb must be 0 (no limit) or at least \(ResourceLimits.minimumJobMegabytes) MiB (got \(maxMemoryMb)): "
                        + "less would not hold a short song.")
            }
            guard maxAnalysisSeconds >= 0, maxAnalysisSeconds.isFinite else {
                throw ValidationError("--max-analysis-seconds must not be negative (got \(maxAnalysisSeconds)).")
            }

            guard (0...19).contains(nice) else { throw ValidationError("--nice must be between 0 and 19 (got \(nice)).") }
            guard maxMemoryMb >= 0 else { throw ValidationError("--max-memory-mb must not be negative (got \(maxMemoryMb)).") }
            guard maxDurationS > 0, maxDurationS <= AudioFacts.maximumDurationS else {
                throw ValidationError("--max-duration-s must be positive and at most \(Int(AudioFacts.maximumDurationS)) (got \(maxDurationS)).")
            }
            guard grace >= 0 else { throw ValidationError("--grace must not be negative (got \(grace)).") }
            guard let level = Logger.Level(rawValue: logLevel) else {
                throw ValidationError("--log-level must be one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")).")
            }
            if let id {
                guard (1...128).contains(id.utf8.count) else { throw ValidationError("--id must have 1 to 128 bytes.") }
            }
            if let healthFile {
                var isDirectory: ObjCBool = false
                let parent = (healthFile as NSString).deletingLastPathComponent
                guard !healthFile.hasSuffix("/"),
                    FileManager.default.fileExists(atPath: parent.isEmpty ? "." : parent, isDirectory: &isDirectory), isDirectory.boolValue
                else {
                    throw ValidationError("--health-file must be a file in an existing directory (got '\(healthFile)').")
                }
            }
            var configuration = WorkerConfiguration(
                endpoint: connect, workerID: id ?? WorkerConfiguration.defaultWorkerID(), detectors: offers,
                heartbeatInterval: .milliseconds(Int64((heartbeatInterval * 1000).rounded())), shutdownGrace: .seconds(grace),
                decoding: DecodingOptions(maximumSeconds: maxDurationS, readAhead: readAhead),
                analysisTimeLimit: maxAnalysisSeconds > 0 ? .milliseconds(Int64((maxAnalysisSeconds * 1000).rounded())) : nil,
                healthFile: healthFile.map(HealthFile.init(path:)))
            configuration.libraryRoots = LibraryRoots(libraryRoots)
            return (configuration, level)
        }
    }
}
