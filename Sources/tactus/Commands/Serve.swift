import ArgumentParser
import Dispatch
import Foundation
import Logging
import TactusAnalysis
import TactusAudio
import TactusAudioProbe
import TactusCoordinator
import TactusLibraryRoots
import TactusLocalWorkers
import TactusModel
import TactusProtocol
import TactusServiceHost
import TactusStore
import TactusWeb
import TactusWorker
import TactusZMQ

extension Tactus {
    /// `tactus serve`: the coordinator with local workers, the embedded default.
    struct Serve: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "serve",
            abstract: "Run the analysis server: a coordinator and local worker processes.",
            discussion: """
                Starts the coordinator with its library (SQLite) and song blobs under --data, and \
                --workers local worker processes (default: one per core), each offering every built-in \
                detector and decoding each song once for all of them, restarting any that exits. \
                Clients connect to the frontend, workers on other machines to the backend, and \
                subscribers to the events socket. All three bind to 127.0.0.1 by default; an \
                address with port * lets the system choose a free port (see the endpoints printed \
                at start and written to DATA/endpoints.json).

                SIGINT or SIGTERM stops accepting submissions, lets running jobs finish for the \
                grace period, checkpoints the library and exits 0. Jobs still queued run after the \
                next start.

                Security: with --curve-secret-key and --authorized-clients every socket is a CurveZMQ \
                server. The frontend and the events admit only the clients whose public \
                certificates (*.key, from `tactus keys generate`) are in --authorized-clients; the \
                backend admits only the workers whose certificates are in --authorized-workers (and \
                the local workers, which get a key pair made at each start). A client's key cannot \
                connect as a worker, nor a worker's as a client. SIGHUP reads both directories again. \
                Binding anything but loopback (127.0.0.0/8, ::1, localhost, ipc, inproc) without \
                CURVE is refused unless --insecure is given.

                Resource limits of the local workers: each may take --max-worker-memory-mb for its \
                jobs beyond its own size once ready (a job needs about 2.5 times its song's bytes) \
                and stops any analysis still running after --max-analysis-seconds. A \
                worker that runs out of memory ends; it is started again at once, its job is tried \
                again on a new worker and, after the third attempt, fails worker-lost with a message \
                naming the song, the signal and the limit. An analysis over its time limit fails its \
                job at once with the code timeout. --job-time-limit is the coordinator's own \
                backstop for any worker, local or not: past it the worker is taken for dead.

                Web: a `tactus web` gateway (pages, the HTTP API under /api/v1, /metrics) is started \
                on --web (127.0.0.1:8080; port 0: any free port, written to DATA/web.json) unless \
                --no-web. It is a client of the coordinator (with CURVE, it gets a key made at each \
                start). Listening beyond loopback needs --web-token-file or --insecure.
                """
        )

        @Option(name: .long, help: ArgumentHelp("Data directory: library.sqlite and blobs/.", valueName: "dir"))
        var data = "tactus-data"

        @Option(help: "Local worker processes, each offering every built-in detector (default: one per core).")
        var workers: Int?

        @Flag(help: "Start no local workers (workers connect from elsewhere).")
        var noLocalWorkers = false

        @Flag(help: ArgumentHelp(
            "Send uploaded songs' bytes to the local workers in their jobs, as to workers elsewhere (by default a "
                + "local worker opens the song in the blob directory itself: no copy, memory that does not grow with the file)."))
        var noSharedBlobs = false

        @Option(help: ArgumentHelp("Client endpoint (ROUTER).", valueName: "addr"))
        var frontend = "tcp://127.0.0.1:5555"

        @Option(help: ArgumentHelp("Worker endpoint (ROUTER).", valueName: "addr"))
        var backend = "tcp://127.0.0.1:5556"

        @Option(help: ArgumentHelp("Event endpoint (PUB).", valueName: "addr"))
        var events = "tcp://127.0.0.1:5557"

        @Option(
            name: .customLong("library-root"),
            help: ArgumentHelp(
                "A music folder analysed in place (repeatable): its files can be submitted by path and scanned (tactus scan), "
                    + "and are never copied.", valueName: "dir"))
        var libraryRoots: [String] = []

        @Flag(help: "Watch the library roots (inotify): new, changed, moved and deleted files are scanned within seconds.")
        var watch = false

        @Flag(help: "Keep the bytes of uploaded songs after their jobs end (by default they are removed; see tactus prune).")
        var keepUploads = false

        @Option(help: "Queued jobs beyond which submissions are answered 'busy'.")
        var maxQueue = 100_000

        @Option(help: ArgumentHelp("The largest song accepted, in bytes (too-large above it).", valueName: "bytes"))
        var maxSongBytes = 256 << 20

        @Option(help: ArgumentHelp(
            "The largest song a client may send in one submit message, in bytes; larger ones come as an upload, "
                + "in chunks (too-large above it). Above 1 MiB it also raises the largest frame the server takes.", valueName: "bytes"))
        var maxInlineSongBytes = ProtocolLimits.maxRequestFrameBytes

        @Option(help: ArgumentHelp(
            "The largest accelerometer recording accepted by cadence, in bytes (too-large above it); one over 1 MiB comes "
                + "as an upload.", valueName: "bytes"))
        var maxRecordingBytes = 64 << 20

        @Option(help: ArgumentHelp("The largest WAV file a stretch request may render, in bytes (too-large above it).",
            valueName: "bytes"))
        var maxRenderBytes = 256 << 20

        @Option(help: ArgumentHelp("Stretch renders waiting or running beyond which stretch is answered 'busy'.", valueName: "count"))
        var maxRenders = 4

        @Option(help: ArgumentHelp(
            "Bytes of submissions held at once while they are received and prepared; beyond it, busy "
                + "(default: an eighth of the memory, 256 MiB to 2 GiB).", valueName: "bytes"))
        var maxIntakeBytes = CoordinatorConfiguration.defaultMaxIntakeBytes

        @Option(name: .customLong("max-duration-s"), help: ArgumentHelp(
            "The longest song accepted, in seconds (too-long above it).", valueName: "seconds"))
        var maxDurationS = 7200.0

        @Option(help: ArgumentHelp(
            "Jobs one client may have queued or running before its submissions are answered 'busy'.", valueName: "count"))
        var maxClientJobs = 10_000

        @Option(help: ArgumentHelp(
            "Connections one address (an IPv4 address, or an IPv6 /64 network) may hold as a client, and as many "
                + "as a worker; more are refused until some close.", valueName: "count"))
        var maxConnectionsPerAddress = 256

        @Option(help: ArgumentHelp(
            "Connections all workers together may hold to the backend from the network or 127.0.0.1 (the local "
                + "workers, over a Unix socket, are not counted); more are refused until some close. Each may hold a "
                + "frame of up to --max-result-bytes while it arrives, so this bounds that memory.", valueName: "count"))
        var maxWorkerConnections = 40

        @Option(help: ArgumentHelp(
            "The largest result a worker may send, in bytes (its job fails with too-large above it). Default: a "
                + "body's 4 MiB and the envelope of the longest song taken (--max-duration-s): 5.4 MiB for two hours.",
            valueName: "bytes"))
        var maxResultBytes: Int?

        @Option(help: ArgumentHelp(
            "Memory each local worker may take for its jobs, in MiB, beyond its own size once ready (setrlimit "
                + "RLIMIT_AS; 0: none).", valueName: "MiB"))
        var maxWorkerMemoryMb = 4096

        @Option(help: ArgumentHelp(
            "Seconds one analysis may take in a local worker before its job fails 'timeout' (0: no limit).",
            valueName: "seconds"))
        var maxAnalysisSeconds = 480.0

        @Option(help: ArgumentHelp(
            "Nice value of the local workers (0 to 19): analysis yields the CPU to the coordinator's answers.", valueName: "n"))
        var workerNice: Int32 = 10

        @Option(help: ArgumentHelp(
            "Seconds a cadence request's recording may take to read and analyse before it fails 'timeout'.", valueName: "seconds"))
        var maxCadenceSeconds = 20.0

        @Option(help: ArgumentHelp(
            "Seconds a stretch request's render may take before it fails 'timeout'.", valueName: "seconds"))
        var maxRenderSeconds = 600.0

        @Option(help: ArgumentHelp(
            "The server's secret certificate (NAME.key_secret): makes every socket a CURVE server.", valueName: "file"))
        var curveSecretKey: String?

        @Option(help: ArgumentHelp(
            "Directory of the public certificates (*.key) of the clients admitted (frontend, events); reloaded on SIGHUP.",
            valueName: "dir"))
        var authorizedClients: String?

        @Option(help: ArgumentHelp(
            "Directory of the public certificates (*.key) of the remote workers admitted (backend); reloaded on SIGHUP.",
            valueName: "dir"))
        var authorizedWorkers: String?

        @Option(help: .hidden)
        var authorizedKeys: String?

        @Flag(help: "Allow binding beyond loopback without CURVE, and the web gateway without a token (a warning is logged).")
        var insecure = false

        @Option(help: ArgumentHelp("Where the web gateway listens: HOST:PORT (port 0: any free port).", valueName: "addr"))
        var web = "127.0.0.1:8080"

        @Flag(help: "Start no web gateway.")
        var noWeb = false

        @Option(help: ArgumentHelp(
            "A host name the web gateway also answers (a reverse proxy's name that it passes on as Host); repeatable.",
            valueName: "name"))
        var allowedHost: [String] = []

        @Option(help: ArgumentHelp(
            "A file whose first line is the token every web request must carry (bearer or login cookie).", valueName: "file"))
        var webTokenFile: String?

        @Option(help: "Seconds one attempt of a job may take before its worker is treated as dead.")
        var jobTimeLimit = 600.0

        @Option(help: ArgumentHelp(
            "What accepted songs and stored results survive: process-crash (a crash of the server) or power-loss "
                + "(also a power loss: every commit and song flushed to the disk first, slower).",
            valueName: "level"))
        var durability: Durability = .processCrash

        /// The choices of `--durability`.
        enum Durability: String, ExpressibleByArgument, CaseIterable {
            case processCrash = "process-crash"
            case powerLoss = "power-loss"

            var library: Library.Durability { self == .powerLoss ? .powerLoss : .processCrash }
        }

        @Option(help: "Seconds running jobs get to finish when the server stops.")
        var grace = 10.0

        @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
        var logLevel: Logger.Level = .info

        @Flag(help: "Print the bound endpoints as one JSON object when ready.")
        var json = false

        func validate() throws {
            if watch && libraryRoots.isEmpty { throw ValidationError("--watch needs at least one --library-root") }
            if let workers, workers < 1 { throw ValidationError("--workers must be at least 1") }
            if maxQueue < 1 { throw ValidationError("--max-queue must be at least 1") }
            if !(jobTimeLimit > 0) { throw ValidationError("--job-time-limit must be positive") }
            if !(grace >= 0) { throw ValidationError("--grace must not be negative") }
            if maxSongBytes < 1 { throw ValidationError("--max-song-bytes must be at least 1") }
            if let problem = AllowedHosts.problem(withNames: allowedHost) { throw ValidationError("--allowed-host \(problem)") }
            if maxInlineSongBytes < 1 { throw ValidationError("--max-inline-song-bytes must be at least 1") }
            if maxRecordingBytes < 1 { throw ValidationError("--max-recording-bytes must be at least 1") }
            if maxRenderBytes < 1024 { throw ValidationError("--max-render-bytes must be at least 1024") }
            if maxRenders < 1 { throw ValidationError("--max-renders must be at least 1") }
            if maxIntakeBytes < 1 { throw ValidationError("--max-intake-bytes must be at least 1") }
            if !(maxDurationS > 0 && maxDurationS <= AudioFacts.maximumDurationS) {
                throw ValidationError("--max-duration-s must be positive and at most \(Int(AudioFacts.maximumDurationS))")
            }
            if maxClientJobs < 1 { throw ValidationError("--max-client-jobs must be at least 1") }
            if maxConnectionsPerAddress < 1 { throw ValidationError("--max-connections-per-address must be at least 1") }
            if maxWorkerConnections < 1 { throw ValidationError("--max-worker-connections must be at least 1") }
            if let workers, workers > maxConnectionsPerAddress {
                throw ValidationError(
                    "--workers \(workers) is more than --max-connections-per-address \(maxConnectionsPerAddress): each local worker holds a connection from this host")
            }
            if let maxResultBytes, maxResultBytes < 1024 { throw ValidationError("--max-result-bytes must be at least 1024") }
            if maxWorkerMemoryMb != 0 && maxWorkerMemoryMb < ResourceLimits.minimumJobMegabytes {
                throw ValidationError(
                    "--max-worker-memory-mb must be 0 (no limit) or at least \(ResourceLimits.minimumJobMegabytes) MiB: "
                        + "less would not hold a short song")
            }
            if !(maxAnalysisSeconds >= 0) || !maxAnalysisSeconds.isFinite {
                throw ValidationError("--max-analysis-seconds must not be negative")
            }
            if !(0...19).contains(workerNice) { throw ValidationError("--worker-nice must be between 0 and 19") }
            if !(maxCadenceSeconds > 0) || !maxCadenceSeconds.isFinite { throw ValidationError("--max-cadence-seconds must be positive") }
            if !(maxRenderSeconds > 0) || !maxRenderSeconds.isFinite { throw ValidationError("--max-render-seconds must be positive") }
            if authorizedKeys != nil {
                throw ValidationError(
                    "--authorized-keys is replaced by --authorized-clients DIR and --authorized-workers DIR: "
                        + "clients and workers are admitted by separate keys, so that a client cannot act as a worker")
            }
            if (curveSecretKey == nil) != (authorizedClients == nil) {
                throw ValidationError("--curve-secret-key and --authorized-clients go together")
            }
            if authorizedWorkers != nil && curveSecretKey == nil {
                throw ValidationError("--authorized-workers needs --curve-secret-key and --authorized-clients")
            }
            if let overlap = Self.overlap(roots: libraryRoots, data: data) { throw ValidationError(overlap) }
            if let nesting = Self.nesting(libraryRoots) { throw ValidationError(nesting) }
        }

        /// Why two library roots cannot go together: one is the other, or lies inside it.
        static func nesting(_ roots: [String]) -> String? {
            guard let (inner, outer, same) = LibraryRoots.nested(roots) else { return nil }
            let (shownInner, shownOuter) = (ShownText.escaped(inner), ShownText.escaped(outer))
            return same
                ? "--library-root \(shownInner) is given twice (as \(shownOuter)): give each root once"
                : "--library-root \(shownInner) lies inside --library-root \(shownOuter): give the outer one alone, its scans cover the inner folder"
        }

        /// Why a library root and the data directory cannot go together: one inside the other
        /// (a scan would take the server's own files, its library and stored songs, for music,
        /// and a tag write would change a stored song under its name). Paths compared resolved.
        static func overlap(roots: [String], data: String) -> String? {
            let resolve = { (path: String) in URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path }
            let dataPath = resolve(data)
            for root in roots {
                let rootPath = resolve(root)
                if dataPath == rootPath || dataPath.hasPrefix(rootPath == "/" ? "/" : rootPath + "/") {
                    return "--library-root \(ShownText.escaped(root)) holds the data directory \(ShownText.escaped(data)): "
                        + "a scan would take the server's own files for music; keep the data directory outside every root"
                }
                if rootPath.hasPrefix(dataPath + "/") {
                    return "--library-root \(ShownText.escaped(root)) is inside the data directory \(ShownText.escaped(data)): "
                        + "keep music and the server's own files apart"
                }
            }
            return nil
        }

        func run() throws {
            let logger = CommandLogging.logger("tactus.serve", level: logLevel)
            let descriptors = BuiltinDetectors.registry.descriptors
            let webAddress = try checkedWebAddress()
            let curve = try curveSetup()
            let coordinator: Coordinator
            let hosts = serviceHosts(logger: logger)
            defer { hosts.stop() }
            // The local workers and web gateway connect over Unix sockets only this user may reach.
            let localSockets = noLocalWorkers && webAddress == nil ? nil : LocalSocketsDirectory(logger: logger)
            defer { localSockets?.remove() }
            do {
                var configuration = CoordinatorConfiguration(
                    dataDirectory: data, frontend: frontend, backend: backend, events: events,
                    knownDetectors: descriptors, maxQueuedJobs: maxQueue, maxSongBytes: maxSongBytes,
                    maxClientJobs: maxClientJobs,
                    maxResultBytes: maxResultBytes ?? CoordinatorConfiguration.resultBytes(forSongsOf: maxDurationS), security: curve?.security,
                    allowInsecure: insecure, jobTimeLimitS: jobTimeLimit, libraryRoots: libraryRoots, shutdownGraceS: grace,
                    durability: durability.library)
                configuration.maxRecordingBytes = maxRecordingBytes
                configuration.maxRenderBytes = maxRenderBytes
                configuration.maxRenders = maxRenders
                configuration.maxIntakeBytes = maxIntakeBytes
                configuration.keepUploads = keepUploads
                configuration.maxInlineSongBytes = maxInlineSongBytes
                configuration.maxConnectionsPerPeer = maxConnectionsPerAddress
                configuration.maxWorkerConnections = maxWorkerConnections
                configuration.localEndpointsDirectory = localSockets?.path
                coordinator = try Coordinator(
                    configuration: configuration, probe: IsolatedProbe(hosts: hosts.probes),
                    renderer: IsolatedRenderer(hosts: hosts.renders), tagger: IsolatedTagger(hosts: hosts.tags),
                    recordings: IsolatedRecordingAnalyzer(hosts: hosts.recordings), logger: logger)
            } catch {
                throw CommandFailure("cannot start the server: \(error)")
            }
            let stopSignals = StopSignals { coordinator.stop() }
            let reloadSignal = ReloadSignal { coordinator.reloadAuthorizedKeys() }
            var pool: LocalWorkerPool?
            var watcher: LibraryWatcher?
            var webPool: LocalWorkerPool?
            try coordinator.run { endpoints in
                // A song's header is read for every submission: its first host is ready before the first song.
                hosts.probes.prestart(1)
                announce(endpoints, logger: logger)
                if webAddress != nil {
                    webPool = LocalWorkerPool(slots: [webSlot(endpoints.forLocalProcesses, curveArguments: curve?.webArguments ?? [])], logger: logger)
                    webPool?.start()
                }
                if watch {
                    do {
                        watcher = try LibraryWatcher(roots: libraryRoots, logger: logger) { coordinator.scanChanged($0) }
                        // What changed while the server was not watching.
                        coordinator.scanChanged(nil)
                    } catch {
                        logger.error("cannot watch the library roots", metadata: ["error": "\(error)"])
                    }
                }
                guard !noLocalWorkers else { return }
                let cores = ProcessInfo.processInfo.activeProcessorCount
                let detectorArguments = descriptors.flatMap { ["--detector", $0.name] }
                // Each holds a connection from this host, within the connections one address may hold.
                let count = workers ?? min(max(1, cores), maxConnectionsPerAddress)
                // A worker decodes ahead of its detectors only where that core would otherwise be idle.
                let readAhead = count < cores ? [] : ["--no-read-ahead"]
                let slots = (1...count).map { index in
                    LocalWorkerPool.Slot(
                        executable: CommandLogging.executablePath,
                        arguments: [
                            "worker", "--connect", endpoints.forLocalProcesses.backend,
                            "--log-level", logLevel == .trace || logLevel == .debug ? logLevel.rawValue : "warning",
                            "--max-memory-mb", String(maxWorkerMemoryMb), "--max-duration-s", String(maxDurationS),
                            "--max-analysis-seconds", String(maxAnalysisSeconds),
                            "--nice", String(workerNice), "--parent-pid", String(getpid()),
                        ] + readAhead + detectorArguments
                            // The blob directory too: a local worker opens an upload's blob instead of receiving its bytes.
                            + (coordinator.libraryRoots.directories + (noSharedBlobs ? [] : [coordinator.blobRoot])).flatMap { ["--library-root", $0] }
                            + (curve?.localWorkerArguments ?? []),
                        label: "worker#\(index)")
                }
                let memoryLimit = maxWorkerMemoryMb
                pool = LocalWorkerPool(
                    slots: slots, logger: logger,
                    onExit: { exit in
                        // A worker past its address-space limit is aborted by the Swift runtime (SIGABRT)
                        // when an allocation fails; any death by signal may be that.
                        let hint = exit.killedBySignal && memoryLimit > 0
                            ? " under its \(memoryLimit) MiB memory limit for jobs (out of memory?)" : ""
                        coordinator.workerProcessEnded(
                            workerID: WorkerConfiguration.defaultWorkerID(processID: exit.processID), reason: "\(exit)\(hint)")
                    },
                    // Its heartbeats may come late on a loaded machine: its job is not taken from it then.
                    onStart: { processID in
                        coordinator.workerProcessStarted(workerID: WorkerConfiguration.defaultWorkerID(processID: processID))
                    })
                pool?.start()
            }
            watcher?.stop()
            pool?.stop(grace: 2)
            webPool?.stop(grace: 2)
            withExtendedLifetime((stopSignals, reloadSignal)) {}
        }

        /// The service host processes in which the coordinator has client content parsed and
        /// computed on: song headers and files' SHA-256 (as many at once as there are cores),
        /// recordings, renders and tags (a read within a minute, a write, which decodes the file
        /// twice, within five).
        private func serviceHosts(logger: Logger) -> ServiceHosts {
            let arguments = [
                "service-host", "--max-memory-mb", String(maxWorkerMemoryMb), "--max-duration-s", String(maxDurationS),
                "--nice", String(workerNice), "--max-call-bytes", String(max(maxInlineSongBytes, ProtocolLimits.maxRequestFrameBytes) + (1 << 20)),
            ]
            let memory = maxWorkerMemoryMb > 0 ? maxWorkerMemoryMb : nil
            let pool = { (processes: Int, limits: [HostedService: Duration]) in
                ServiceHostPool(
                    configuration: ServiceHostPool.Configuration(
                        executable: CommandLogging.executablePath, arguments: arguments, processes: processes, timeLimits: limits,
                        memoryLimitMegabytes: memory),
                    logger: logger)
            }
            let cores = ProcessInfo.processInfo.activeProcessorCount
            return ServiceHosts(
                probes: pool(max(1, cores), [.probe: .seconds(120), .identify: .seconds(120)]),
                recordings: pool(2, [.cadence: .milliseconds(Int64(maxCadenceSeconds * 1000))]),
                renders: pool(1, [.render: .milliseconds(Int64(maxRenderSeconds * 1000)), .workout: .milliseconds(Int64(maxRenderSeconds * 1000))]),
                tags: pool(1, [.tagsRead: .seconds(60), .tagsWrite: .seconds(300)]))
        }

        /// The web gateway's address, checked (loopback, a token or --insecure; free now), nil with --no-web.
        private func checkedWebAddress() throws -> WebAddress? {
            unlink(data + "/web.json")
            guard !noWeb else { return nil }
            let address = try WebAddress(web, option: "--web")
            if let webTokenFile {
                do { _ = try WebConfiguration.readToken(file: webTokenFile) } catch { throw CommandFailure("\(error)") }
            }
            try address.checkAccess(token: webTokenFile != nil, insecure: insecure, option: "--web")
            if address.port != 0, let problem = address.probe() {
                throw CommandFailure("cannot listen on \(web) for the web gateway: \(problem) (choose another with --web HOST:PORT, or --no-web)")
            }
            return address
        }

        /// The `tactus web` process serve supervises: a client of `endpoints`, ending with this process.
        private func webSlot(_ endpoints: BoundEndpoints, curveArguments: [String]) -> LocalWorkerPool.Slot {
            var arguments = [
                "web", "--server", endpoints.frontend, "--events", endpoints.events, "--listen", web,
                "--announce-file", data + "/web.json", "--parent-pid", String(getpid()), "--max-upload-bytes", String(maxSongBytes),
                "--log-level", logLevel == .trace || logLevel == .debug ? logLevel.rawValue : "warning",
            ]
            if let webTokenFile { arguments += ["--web-token-file", webTokenFile] }
            arguments += allowedHost.flatMap { ["--allowed-host", $0] }
            if insecure { arguments.append("--insecure") }
            if json { arguments.append("--json") }
            return LocalWorkerPool.Slot(executable: CommandLogging.executablePath, arguments: arguments + curveArguments, label: "web")
        }

        /// The coordinator's CURVE security, and the key files of the local workers (if any): a
        /// key pair made at each start, admitted besides the directory's keys, its secret certificate
        /// written (mode 0600) under DATA/local-worker-keys with the server's public certificate.
        private func curveSetup() throws -> (security: CoordinatorSecurity, localWorkerArguments: [String], webArguments: [String])? {
            guard let curveSecretKey, let authorizedClients else { return nil }
            do {
                let serverKeys = try CurveCertificate(contentsOf: curveSecretKey).keyPair
                guard !noLocalWorkers || !noWeb else {
                    let security = CoordinatorSecurity(
                        keyPair: serverKeys, authorizedClientsDirectory: authorizedClients, authorizedWorkersDirectory: authorizedWorkers)
                    return (security, [], [])
                }
                let directory = (data as NSString).appendingPathComponent("local-worker-keys")
                for name in ["server.key", "local-worker.key", "local-worker.key_secret", "web.key", "web.key_secret"] {
                    unlink((directory as NSString).appendingPathComponent(name))
                }
                let serverPublic = (directory as NSString).appendingPathComponent("server.key")
                var workerArguments: [String] = []
                var webArguments: [String] = []
                var extraWorkerKeys: Set<CurveKey> = []
                var extraClientKeys: Set<CurveKey> = []
                if !noLocalWorkers {
                    let workerKeys = try CurveKeyPair.generate()
                    let files = try CurveCertificate(keyPair: workerKeys).save(name: "local-worker", in: directory)
                    extraWorkerKeys.insert(workerKeys.publicKey)
                    workerArguments = ["--curve-server-key", serverPublic, "--curve-secret-key", files.secretPath]
                }
                if !noWeb {
                    // The gateway is a client: its key is admitted on the frontend and the events only.
                    let webKeys = try CurveKeyPair.generate()
                    let files = try CurveCertificate(keyPair: webKeys).save(name: "web", in: directory)
                    extraClientKeys.insert(webKeys.publicKey)
                    webArguments = ["--curve-server-key", serverPublic, "--curve-secret-key", files.secretPath]
                }
                try Data(CurveCertificate(publicKey: serverKeys.publicKey).publicText().utf8).write(to: URL(fileURLWithPath: serverPublic))
                let security = CoordinatorSecurity(
                    keyPair: serverKeys, authorizedClientsDirectory: authorizedClients, authorizedWorkersDirectory: authorizedWorkers,
                    extraWorkerKeys: extraWorkerKeys, extraClientKeys: extraClientKeys)
                return (security, workerArguments, webArguments)
            } catch {
                throw CommandFailure("cannot set up CURVE: \(error)")
            }
        }

        /// Prints the endpoints and writes them to DATA/endpoints.json for scripts and tests.
        private func announce(_ endpoints: BoundEndpoints, logger: Logger) {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            let json = (try? encoder.encode(endpoints)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
            if !FileManager.default.createFile(atPath: data + "/endpoints.json", contents: Data(json.utf8)) {
                logger.warning("cannot write the endpoints for scripts", metadata: ["file": "\(data)/endpoints.json"])
            }
            if self.json {
                print(jsonLine: json)
            } else {
                print("tactus serve: frontend \(endpoints.frontend)  backend \(endpoints.backend)  events \(endpoints.events)")
                print("data in \(data); stop with Ctrl-C")
            }
            fflush(nil)  // every output stream: the endpoints must reach a pipe at once
        }
    }
}

/// Runs an action on each SIGHUP (instead of the default exit).
final class ReloadSignal {
    private let source: any DispatchSourceSignal

    init(_ action: @escaping @Sendable () -> Void) {
        signal(SIGHUP, SIG_IGN)
        source = DispatchSource.makeSignalSource(signal: SIGHUP, queue: .global())
        source.setEventHandler(handler: action)
        source.resume()
    }
}

/// Runs an action once on SIGINT or SIGTERM (instead of the default immediate exit).
final class StopSignals {
    private let sources: [any DispatchSourceSignal]

    init(_ action: @escaping @Sendable () -> Void) {
        sources = [SIGINT, SIGTERM].map { signalNumber in
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler(handler: action)
            source.resume()
            return source
        }
    }
}

/// The service host pools of `tactus serve`.
struct ServiceHosts {
    var probes: ServiceHostPool
    var recordings: ServiceHostPool
    var renders: ServiceHostPool
    var tags: ServiceHostPool

    func stop() {
        for pool in [probes, recordings, renders, tags] { pool.stop() }
    }
}

extension BoundEndpoints {
    /// The endpoints the processes `tactus serve` starts connect to: the local ones where bound.
    var forLocalProcesses: BoundEndpoints {
        local.map { BoundEndpoints(frontend: $0.frontend, backend: $0.backend, events: $0.events) } ?? self
    }
}
