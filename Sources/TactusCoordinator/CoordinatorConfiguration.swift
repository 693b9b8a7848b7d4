import Foundation
import TactusDetector
import TactusModel
import TactusProtocol
import TactusStore

/// Everything a coordinator needs to know before it starts.
public struct CoordinatorConfiguration: Sendable {
    /// Holds the library (`library.sqlite`) and the song blobs (`blobs/`).
    public var dataDirectory: String
    /// Where clients connect (ROUTER).
    public var frontend: String
    /// Where workers connect (ROUTER).
    public var backend: String
    /// Where events are published (PUB).
    public var events: String
    /// Detectors that are always offered, even before a worker of theirs connects (the
    /// built-ins of `tactus serve`). Their declarations validate submitted parameters.
    public var knownDetectors: [DetectorDescriptor]
    /// Queued jobs beyond which `submit` answers `busy`.
    public var maxQueuedJobs: Int
    /// Frame and message size limits of every socket.
    public var limits: ProtocolLimits
    /// The commands clients may send: the protocol's, and any an extension adds (each added
    /// one needs its service in ``services``).
    public var commands = ClientCommands.standard
    /// The services of the commands added to ``commands``, one per command.
    public var services: [any CommandService] = []
    /// The largest song accepted by `submit`, in bytes (`too-large` above it), checked before
    /// the song is decoded or stored.
    public var maxSongBytes: Int
    /// The most bytes of submissions the coordinator holds while receiving and preparing them
    /// (uploads and files under a library root); a submission beyond it is answered `busy`.
    /// One submission is always allowed when none is in hand.
    public var maxIntakeBytes = CoordinatorConfiguration.defaultMaxIntakeBytes

    /// An eighth of the machine's memory, at least 256 MiB and at most 2 GiB.
    public static var defaultMaxIntakeBytes: Int {
        let eighth = Int(clamping: ProcessInfo.processInfo.physicalMemory / 8)
        return min(max(eighth, 256 << 20), 2 << 30)
    }

    /// The largest song a client may send in one `submit` message; a larger one is sent as an
    /// `upload`, in chunks. Every frame a client sends is bounded by this, the chunk size and
    /// ``ProtocolLimits/maxRequestFrameBytes`` (the frontend's `ZMQ_MAXMSGSIZE`).
    public var maxInlineSongBytes = ProtocolLimits.maxRequestFrameBytes

    /// The largest frame the frontend receives (`ZMQ_MAXMSGSIZE`): a frame beyond it makes
    /// libzmq drop the connection as soon as the frame's size is read, before anything of it
    /// is held. Recordings and songs larger than this travel as uploads.
    public var maxClientFrameBytes: Int {
        max(maxInlineSongBytes, UploadBook.chunkBytes, ProtocolLimits.maxRequestFrameBytes)
    }

    /// The largest accelerometer recording accepted by `cadence`, in bytes (`too-large` above it;
    /// 30 minutes at 500 Hz is about 36 MB of CSV). One larger than a frame comes as an upload.
    public var maxRecordingBytes = 64 << 20
    /// The largest WAV file a `stretch` request may render, in bytes (`too-large` above it,
    /// estimated from the song's duration before rendering, checked again after).
    public var maxRenderBytes = 256 << 20
    /// Renders in hand (waiting or rendering) beyond which `stretch` answers `busy`.
    public var maxRenders = 4
    /// Seconds a render's file (or failure) is kept after it ends.
    public var renderRetentionS = 3600.0
    /// Connections one peer (an IPv4 address, or an IPv6 /64 network) may hold as a client (to
    /// the frontend and the events socket together), and as many as a worker (to the backend);
    /// a connection beyond is refused during its handshake (``ConnectionLimits``).
    public var maxConnectionsPerPeer = 256
    /// Connections all workers together may hold to the backend beyond this machine's Unix
    /// sockets (the local workers of `tactus serve` are not counted). libzmq gives each frame
    /// its whole buffer as soon as the frame's size is read, so every connection may hold a
    /// frame of up to ``maxWorkerFrameBytes`` that never comes whole: this bounds that memory
    /// (40 of 5.4 MiB by default), whoever connects.
    public var maxWorkerConnections = 40
    /// A directory only this user may enter, where the coordinator also binds its three sockets
    /// as Unix sockets (``BoundEndpoints/local``) for the local workers and web gateway of
    /// `tactus serve`: the directory's permissions say who may connect there, so those
    /// connections are not counted against a peer's limit, and a local user holding 127.0.0.1's
    /// connections cannot keep them out. Nil: TCP only.
    public var localEndpointsDirectory: String?
    /// Jobs one client may have queued or running; a submission that would take it over the
    /// limit is answered `busy` (one submission is always allowed to a client with nothing
    /// in flight, so a limit below the number of detectors does not lock clients out).
    public var maxClientJobs: Int
    /// The largest RESULT a worker may send (body and envelope), in bytes; a larger one fails
    /// its job with `too-large`.
    public var maxResultBytes: Int

    /// The largest RESULT a worker needs for songs of up to `durationS` seconds: a body (the
    /// protocol's limit) and an envelope of a float32 every 20 ms (the analysis' hop is 23.2 ms
    /// at any sample rate), with a minute to spare. Every worker connection may make the
    /// coordinator hold a frame this large, so it is not larger than songs need.
    public static func resultBytes(forSongsOf durationS: Double, limits: ProtocolLimits = .standard) -> Int {
        let envelope = 4 * Int((min(durationS, AudioFacts.maximumDurationS) + 60) / 0.02)
        return limits.maxBodyBytes + min(envelope, limits.maxFloatArrayBytes)
    }

    /// The largest frame the backend receives (`ZMQ_MAXMSGSIZE`, per frame): nothing a worker
    /// sends carries audio, and its largest frames are a RESULT's body (within the protocol's
    /// body limit) and its envelope (the whole RESULT within ``maxResultBytes``). A larger
    /// frame makes libzmq drop the connection as soon as the frame's size is read.
    public var maxWorkerFrameBytes: Int {
        max(limits.maxBodyBytes, min(limits.maxFloatArrayBytes, maxResultBytes))
    }
    /// CURVE on every socket, admitting only authorized keys; nil for no encryption (loopback only).
    public var security: CoordinatorSecurity?
    /// Allows binding beyond loopback without ``security`` (a warning is logged at each start).
    public var allowInsecure: Bool
    /// How long one attempt of a job may run before its worker is treated as dead, in seconds.
    public var jobTimeLimitS: Double
    /// Attempts after which a job whose workers keep dying is failed.
    public var maxAttempts: Int
    /// Seconds between heartbeats.
    public var heartbeatIntervalS: Double
    /// Heartbeat intervals of silence after which a peer is dead.
    public var liveness: Int
    /// Seconds the queued jobs of a detector the server does not know (a plugin's) wait once
    /// no connected worker offers it; then they fail with `unknown-detector`.
    public var abandonedDetectorGraceS: Double = 300
    /// Directories under which `submit` by server-side path is allowed; none: refused. Songs
    /// below them are analysed in place (never copied), and `scan` compares them with the library.
    public var libraryRoots: [String]
    /// Keep the bytes of uploaded songs after their jobs end (`--keep-uploads`); by default a
    /// song's blob is removed once it has no queued or running job.
    public var keepUploads = false
    /// Seconds running jobs get to finish when the coordinator stops.
    public var shutdownGraceS: Double
    /// What an accepted submission and a stored result survive: a crash of the coordinator
    /// (the default), or a power loss too (every commit and every song's blob flushed to the
    /// disk before the answer, which makes submissions slower).
    public var durability: Library.Durability
    /// Seconds a write waits for another process's lock on the library before the request
    /// fails with `unavailable`. The loop waits meanwhile, so this stays well under a worker's
    /// liveness (7.5 s) for heartbeats to keep flowing.
    public var databaseBusyTimeoutS: Double

    public init(
        dataDirectory: String,
        frontend: String = "tcp://127.0.0.1:5555",
        backend: String = "tcp://127.0.0.1:5556",
        events: String = "tcp://127.0.0.1:5557",
        knownDetectors: [DetectorDescriptor] = [],
        maxQueuedJobs: Int = 100_000,
        limits: ProtocolLimits = .standard,
        maxSongBytes: Int = 256 << 20,
        maxClientJobs: Int = 10_000,
        maxResultBytes: Int = resultBytes(forSongsOf: 7200),  // `tactus serve`'s default --max-duration-s
        security: CoordinatorSecurity? = nil,
        allowInsecure: Bool = false,
        jobTimeLimitS: Double = 600,
        maxAttempts: Int = Liveness.maxAttempts,
        heartbeatIntervalS: Double = Liveness.heartbeatInterval.seconds,
        liveness: Int = Liveness.heartbeats,
        libraryRoots: [String] = [],
        shutdownGraceS: Double = 10,
        durability: Library.Durability = .processCrash,
        databaseBusyTimeoutS: Double = 2
    ) {
        self.dataDirectory = dataDirectory
        self.frontend = frontend
        self.backend = backend
        self.events = events
        self.knownDetectors = knownDetectors
        self.maxQueuedJobs = maxQueuedJobs
        self.limits = limits
        self.maxSongBytes = maxSongBytes
        self.maxClientJobs = maxClientJobs
        self.maxResultBytes = maxResultBytes
        self.security = security
        self.allowInsecure = allowInsecure
        self.jobTimeLimitS = jobTimeLimitS
        self.maxAttempts = maxAttempts
        self.heartbeatIntervalS = heartbeatIntervalS
        self.liveness = liveness
        self.libraryRoots = libraryRoots
        self.shutdownGraceS = shutdownGraceS
        self.durability = durability
        self.databaseBusyTimeoutS = databaseBusyTimeoutS
    }

    /// The endpoints that others than this machine can reach.
    var exposedEndpoints: [String] {
        [frontend, backend, events].filter { !BindAddress.isLoopback($0) }
    }

    var libraryPath: String { dataDirectory + "/library.sqlite" }
    var blobDirectory: String { dataDirectory + "/blobs" }
    /// The files of songs being uploaded; emptied when the coordinator starts.
    var uploadDirectory: String { dataDirectory + "/uploads" }
    /// The files of `stretch` renders; emptied when the coordinator starts.
    var renderDirectory: String { dataDirectory + "/renders" }
}
