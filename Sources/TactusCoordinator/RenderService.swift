import Foundation
import Synchronization
import TactusLibraryRoots
import TactusModel
import TactusProtocol
import TactusStore

/// The `stretch` and `render` requests: songs of the library rendered at another tempo, or
/// playlists of it rendered as workouts, by the coordinator's ``SongRenderer`` on the service's
/// render thread, their WAV files kept under the data directory (`renders/`) for
/// ``CoordinatorConfiguration/renderRetentionS`` after they end.
///
/// Owns its state: the renders known (``RenderBook``) and the render thread. Lives on the
/// loop's thread, which routes it its requests and lends it the read threads and whether the
/// server still takes work.
final class RenderService: RequestService {
    private let coordinator: Coordinator
    /// The renders of `stretch` requests.
    private var renders = RenderBook()
    /// The thread that renders (one: a render takes a core).
    let work: BackgroundWork
    /// The bytes of rendered files read and not yet sent: 16 MiB (pieces of 2 MiB, or one whole
    /// file of up to 64 MiB alone, for a client older than pieces).
    private let downloads = IntakeBudget(limit: 8 * RenderRequest.maxPieceBytes)

    init(coordinator: Coordinator) throws(CoordinatorError) {
        self.coordinator = coordinator
        work = try BackgroundWork(threads: 1, name: "tactus-render")
    }

    private var configuration: CoordinatorConfiguration { coordinator.configuration }

    /// Routes `stretch` (a render begun) and `render` (its state and file) to this service.
    func route(into routes: inout RequestRoutes) {
        routes.on(StretchCommand.self) { [self] loop, request, origin, answer in
            begin(request, sharer: origin.sharer, accepting: loop.accepting, reads: loop.reads, then: answer)
        }
        routes.on(RenderCommand.self) { [self] loop, request, _, answer in self.answer(request, reads: loop.reads, then: answer) }
    }

    /// Checks the request against the library on a read thread (the song, its tempo, the change of
    /// tempo, the output's size; or the playlist, its songs' bytes and the output's size), then
    /// starts the render and answers with its id at once.
    /// `sharer` (``RequestOrigin/sharer``) holds at most half of the renders in hand.
    func begin(
        _ request: StretchRequest, sharer: String?, accepting: Bool, reads: BackgroundWork, then answer: @escaping RequestRoutes.Answer
    ) {
        guard let renderer = coordinator.renderer else {
            return answer(.failure(ErrorBody(code: .forbidden, message: "this server does not render songs")))
        }
        guard accepting else {
            return answer(.failure(ErrorBody(
                code: .unavailable, message: "the server is stopping; ask again after it restarts", retryAfterMs: 5000)))
        }
        removeExpiredRenders()
        guard reads.inFlight < CoordinatorLoop.maxBackgroundWork else {
            return answer(.failure(ErrorBody(
                code: .busy, message: "the server has \(reads.inFlight) reads in hand; try again shortly", retryAfterMs: 200)))
        }
        reads.run({
            [library = coordinator.library, blobs = coordinator.blobs, probe = coordinator.probe, maxBytes = configuration.maxRenderBytes,
             roots = coordinator.libraryRoots] in
            Result {
                let songs = SongFiles(library: library, blobs: blobs, roots: roots, probe: probe)
                return try RenderPlan(request, library: library, songs: songs, maxBytes: maxBytes)
            }
        }) { [self] planned in
            answer(planned.flatMap { plan in Result { .stretch(try startRender(plan, sharer: sharer, renderer: renderer)) } })
        }
    }

    /// The render's state; once it is done, the piece of its file the request asks for (at most
    /// ``RenderRequest/maxPieceBytes``), or without `offset` the whole file (up to
    /// ``RenderRequest/maxWholeBytes``), read on a read thread with ``downloads`` in hand at
    /// once: a long workout's file is hundreds of megabytes.
    func answer(_ request: RenderRequest, reads: BackgroundWork, then answer: @escaping RequestRoutes.Answer) {
        removeExpiredRenders()
        guard let entry = renders.entries[request.render] else {
            return answer(.failure(ErrorBody(
                code: .notFound,
                message: "no render \(request.render) (a render is kept \(Int(configuration.renderRetentionS)) s after it ends)")))
        }
        guard entry.status.state == .done else { return answer(.success(.render(entry.status, wav: nil))) }
        let size = entry.status.bytes ?? 0
        let offset = request.offset ?? 0
        // Without an offset (a client older than pieces), the whole file, up to a limit.
        guard request.offset != nil || size <= RenderRequest.maxWholeBytes else {
            return answer(.failure(ErrorBody(
                code: .tooLarge,
                message: "render \(request.render) is \(size) bytes, over the \(RenderRequest.maxWholeBytes) a reply carries whole: "
                    + "ask for it a piece at a time with offset (protocol/SPEC.md, section 3.7), as tactus and the Python client do")))
        }
        guard offset <= size else {
            return answer(.failure(ErrorBody(
                code: .badRequest, message: "offset \(offset) is beyond the end of render \(request.render), \(size) bytes")))
        }
        let length = request.offset == nil ? size : min(size - offset, RenderRequest.maxPieceBytes)
        guard reads.inFlight < CoordinatorLoop.maxBackgroundWork else {
            return answer(.failure(ErrorBody(
                code: .busy, message: "the server has \(reads.inFlight) reads in hand; try again shortly", retryAfterMs: 200)))
        }
        guard downloads.take(length) else {
            return answer(.failure(ErrorBody(
                code: .busy, message: "the server is reading \(downloads.inHand) bytes of renders for other requests; try again shortly",
                retryAfterMs: 200)))
        }
        reads.run({ [path = entry.path, render = request.render] in
            Result { () throws(ErrorBody) -> [UInt8] in try Self.piece(of: path, render: render, offset: offset, length: length) }
        }) { [downloads] wav in
            downloads.release(length)
            answer(wav.map { .render(entry.status, wav: $0) }.mapError { $0 as any Error })
        }
    }

    /// `length` bytes of the file at `path`, render `render`'s, from `offset`; `not-found` when
    /// the render was forgotten (its time ran out) since the request came.
    private static func piece(of path: String, render: String, offset: Int, length: Int) throws(ErrorBody) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT { throw ErrorBody(code: .notFound, message: "render \(render) was forgotten meanwhile (its time ran out)") }
            throw ErrorBody(code: .internal, message: "the render's file \(path) cannot be read: \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: length)
        var read = 0
        while read < length {
            let count = bytes.withUnsafeMutableBytes { buffer in
                pread(descriptor, buffer.baseAddress! + read, length - read, off_t(offset + read))
            }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                throw ErrorBody(code: .internal, message: "the render's file \(path) ended or failed at byte \(offset + read)")
            }
            read += count
        }
        return bytes
    }

    /// The render of `plan`: the one already known (unless it failed), or a new one handed to the
    /// render thread, within the renders in hand and `sharer`'s share of them (half): one client
    /// starting long renders one after the other otherwise kept every other client's `busy`.
    private func startRender(_ plan: RenderPlan, sharer: String?, renderer: any SongRenderer) throws(ErrorBody) -> RenderStatus {
        let id = plan.status.render
        if let known = renders.entries[id], known.status.state != .failed { return known.status }
        if let refusal = renders.refusal(of: sharer, maxRenders: configuration.maxRenders) { throw refusal }
        let output = configuration.renderDirectory + "/\(id).wav"
        renders.entries[id] = RenderBook.Entry(status: plan.status, path: output, sharer: sharer)
        let maxBytes = configuration.maxRenderBytes
        let logger = coordinator.logger
        logger.info("render started", metadata: ["render": "\(id)", "song": "\(plan.name)"])
        work.run({ plan.render(with: renderer, to: output, maxBytes: maxBytes) }) { [self] outcome in
            renders.finish(id, outcome)
            logger.info("render ended", metadata: ["render": "\(id)", "state": "\(renders.entries[id]?.status.state.rawValue ?? "?")"])
        }
        return plan.status
    }

    /// Forgets the renders that ended more than the retention ago, and the oldest ended ones beyond
    /// ``RenderBook/keptPerRender`` times the renders in hand allowed, and removes their files.
    private func removeExpiredRenders() {
        let cutoff = ContinuousClock.now - .milliseconds(Int64(configuration.renderRetentionS * 1000))
        for path in renders.expire(before: cutoff, keeping: RenderBook.keptPerRender * configuration.maxRenders) {
            try? FileManager.default.removeItem(atPath: path)
        }
    }
}

/// A `stretch` request checked against the library: the song, its tempo and the change of tempo,
/// or the playlist's songs and theirs.
struct RenderPlan: Sendable {
    /// What is rendered: one song, or songs joined into a workout.
    enum Work: Sendable {
        /// The song's bytes in the blob store, its tempo (at the octave chosen) and its target.
        case song(blob: String, sourceBPM: Double, targetBPM: Double)
        case workout([WorkoutSong])
    }

    /// The render's status as it starts (`pending`).
    var status: RenderStatus
    /// The song's file name in the library (for a playlist, its files' names).
    var name: String
    var work: Work
    /// Files below a library root opened for the render, kept open until it ends (the renderer
    /// reads them through `/proc/self/fd`, never by their names).
    var openFiles: [LibraryFile] = []

    /// Reads what the library has on the song, or builds the playlist, with the request's maximum
    /// change of tempo; `songs` finds their files.
    init(_ request: StretchRequest, library: Library, songs: SongFiles, maxBytes: Int) throws {
        let maxStretch = request.maxStretchPct ?? StretchRequest.defaultMaxStretchPct
        if let playlist = request.playlist {
            try self.init(playlist: playlist, maxStretch, library: library, songs: songs, maxBytes: maxBytes)
        } else {
            try self.init(song: request.song ?? "", bpm: request.bpm ?? 0, maxStretch, library: library, songs: songs, maxBytes: maxBytes)
        }
        openFiles = songs.opened.withLock { $0 }
    }

    /// A song: an unknown song is `not-found`, a song without a consensus tempo `no-tempo`, a target
    /// beyond `maxStretch` percent `too-far`, an output over `maxBytes` `too-large` (a mono 16-bit
    /// WAV file at the song's sample rate).
    private init(song request: String, bpm: Double, _ maxStretch: Double, library: Library, songs: SongFiles, maxBytes: Int) throws {
        let id = try library.resolveSongID(request)
        guard let record = try library.song(id) else { throw StoreError.unknownSong(request) }
        let song = "song \(id.short) (\(record.fileName))"
        guard let songBPM = try library.consensus(of: id)?.bpm else {
            throw ErrorBody(
                code: .noTempo, message: "\(song) has no tempo in the library: no detector found one, or its analyses are not done")
        }
        let target = (bpm * 1000).rounded() / 1000
        let change = TempoChange(from: songBPM, to: target)
        guard change.isWithin(maxStretch / 100) else {
            throw ErrorBody(
                code: .tooFar,
                message: "\(song) at \(Self.format(songBPM)) BPM (or half or double) is more than \(Self.format(maxStretch)) % "
                    + "from \(Self.format(target)) BPM (max_stretch_pct)")
        }
        let bytes = Self.wavBytes(samples: record.durationS * Double(record.sampleRate) / change.tempoRatio)
        guard bytes <= Double(maxBytes) else {
            throw ErrorBody(
                code: .tooLarge, message: "\(song) rendered at \(Self.format(target)) BPM would take about \(Self.format(bytes)) bytes, "
                    + "over the server's limit of \(maxBytes) (--max-render-bytes)")
        }
        let file = try songs.path(of: id, named: song)
        status = RenderStatus(
            render: RenderStatus.id(song: id, bpm: target), song: id, sourceBPM: songBPM, factor: change.factor,
            targetBPM: target, tempoRatio: change.tempoRatio, state: .pending)
        name = record.fileName
        work = .song(blob: file, sourceBPM: songBPM * change.factor, targetBPM: target)
    }

    /// A playlist built from the library as the `playlist` request builds it, its songs chosen within
    /// `maxStretch` percent of their segments' cadences: an empty playlist is `not-found`, an output
    /// over `maxBytes` `too-large` (estimated at the first song's sample rate, crossfades ignored), a
    /// song whose bytes the server no longer keeps `not-found`.
    private init(playlist query: PlaylistQuery, _ maxStretch: Double, library: Library, songs files: SongFiles, maxBytes: Int) throws {
        var query = query
        query.tolerance = maxStretch / 100
        // Every song is stretched to its cadence: none beyond the stretch allowed.
        query.strict = true
        let playlist = try library.playlist(try query.playlistRequest(command: "stretch"))
        guard !playlist.entries.isEmpty else {
            throw ErrorBody(
                code: .notFound, message: "the library has no song within \(Self.format(maxStretch)) % of the playlist's cadences "
                    + "(max_stretch_pct), even at half or double")
        }
        var songs: [WorkoutSong] = []
        var rate = 0.0, samples = 0.0
        for entry in playlist.entries {
            let id = entry.match.song
            let song = "song \(id.short) (\(entry.match.file))"
            let file = try files.path(of: id, named: song)
            guard let record = try library.song(id) else { throw StoreError.unknownSong(id.hex) }
            if rate == 0 { rate = Double(record.sampleRate) }
            samples += record.durationS * rate * entry.match.matchedBPM / entry.cadence
            songs.append(WorkoutSong(
                path: file, name: entry.match.file, sourceBPM: entry.match.matchedBPM, targetBPM: entry.cadence))
        }
        let bytes = Self.wavBytes(samples: samples)
        guard bytes <= Double(maxBytes) else {
            throw ErrorBody(
                code: .tooLarge, message: "the playlist's \(songs.count) songs rendered would take about \(Self.format(bytes)) bytes, "
                    + "over the server's limit of \(maxBytes) (--max-render-bytes)")
        }
        let rendered = zip(playlist.entries, songs).map { entry, song in
            RenderedSong(song: entry.match.song, sourceBPM: song.sourceBPM, targetBPM: song.targetBPM)
        }
        status = RenderStatus(render: RenderStatus.id(playlist: rendered), songs: rendered, state: .pending)
        name = songs.map(\.name).joined(separator: ", ")
        work = .workout(songs)
    }

    /// Renders the song or the workout into `output` (on a render thread): its size, duration and
    /// time taken, or why it failed (a file over `maxBytes` is removed and fails `too-large`).
    func render(with renderer: any SongRenderer, to output: String, maxBytes: Int) -> Result<RenderBook.Rendered, ErrorBody> {
        let started = ContinuousClock.now
        do throws(ErrorBody) {
            let directory = (output as NSString).deletingLastPathComponent
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            } catch {
                throw ErrorBody(code: .internal, message: "cannot create \(directory): \(error.localizedDescription)")
            }
            let duration = switch work {
            case .song(let blob, let sourceBPM, let targetBPM):
                try renderer.render(songAt: blob, name: name, sourceBPM: sourceBPM, targetBPM: targetBPM, to: output)
            case .workout(let songs):
                try renderer.renderWorkout(songs, to: output)
            }
            let size = (try? FileManager.default.attributesOfItem(atPath: output))?[.size] as? Int
            guard let size else { throw ErrorBody(code: .internal, message: "the renderer wrote no file for \(name)") }
            guard size <= maxBytes else {
                try? FileManager.default.removeItem(atPath: output)
                throw ErrorBody(
                    code: .tooLarge,
                    message: "\(name) rendered takes \(size) bytes, over the server's limit of \(maxBytes) (--max-render-bytes)")
            }
            return .success(RenderBook.Rendered(bytes: size, durationS: duration, renderS: (ContinuousClock.now - started).seconds))
        } catch {
            try? FileManager.default.removeItem(atPath: output)
            return .failure(error)
        }
    }

    /// `value` to two decimals, without them when it is whole (in `Int`'s range; beyond it, as a
    /// `Double` prints).
    private static func format(_ value: Double) -> String {
        guard abs(value) < 1e15 else { return String(value) }
        return value == value.rounded() ? String(Int(value)) : String((value * 100).rounded() / 100)
    }

    /// The bytes of a mono 16-bit WAV file of `samples` samples, as a `Double`: a duration read
    /// from the library may be far beyond what an `Int` holds.
    private static func wavBytes(samples: Double) -> Double {
        44 + 2 * samples.rounded(.up)
    }
}

/// The renders the coordinator knows: in hand, done (their files under the data directory) or
/// failed. Belongs to the loop's thread; forgotten when the coordinator stops.
struct RenderBook {
    struct Entry {
        var status: RenderStatus
        /// Where the WAV file is (or will be) written.
        var path: String
        /// Who asked for it, as its share counts (``RequestOrigin/sharer``).
        var sharer: String?
        /// When the render ended; nil while it is in hand.
        var ended: ContinuousClock.Instant?
    }

    /// What a finished render wrote.
    struct Rendered: Sendable {
        var bytes: Int
        var durationS: Double
        var renderS: Double
    }

    var entries: [String: Entry] = [:]

    /// Renders waiting for a thread or rendering.
    var pendingCount: Int { entries.values.count(where: { $0.status.state == .pending }) }

    /// Why a new render of `sharer`'s (``RequestOrigin/sharer``) cannot start now, nil when it
    /// can: `busy` when `maxRenders` are in hand, or `sharer` holds half of them.
    func refusal(of sharer: String?, maxRenders: Int) -> ErrorBody? {
        let inHand = pendingCount
        guard inHand < maxRenders else {
            return ErrorBody(
                code: .busy, message: "the server has \(inHand) renders in hand, the most it takes; ask again later", retryAfterMs: 5000)
        }
        let share = max(1, maxRenders / 2)
        guard let sharer, entries.values.count(where: { $0.status.state == .pending && $0.sharer == sharer }) >= share else {
            return nil
        }
        return ErrorBody(
            code: .busy, message: "you have \(share) renders in hand, the most one client may; ask again once one is done",
            retryAfterMs: 5000)
    }

    /// Records the end of render `id`.
    mutating func finish(_ id: String, _ outcome: Result<Rendered, ErrorBody>) {
        guard var entry = entries[id] else { return }
        switch outcome {
        case .success(let rendered):
            entry.status.state = .done
            entry.status.bytes = rendered.bytes
            entry.status.durationS = rendered.durationS
            entry.status.renderS = rendered.renderS
        case .failure(let error):
            entry.status.state = .failed
            entry.status.error = error
        }
        entry.ended = .now
        entries[id] = entry
    }

    /// Ended renders kept per render in hand allowed, at most (so that the files kept stay within
    /// a few times the renders' limit), however recent.
    static let keptPerRender = 4

    /// Forgets the renders that ended before `cutoff` and the oldest ended ones beyond `keeping`;
    /// returns their files' paths.
    mutating func expire(before cutoff: ContinuousClock.Instant, keeping: Int) -> [String] {
        let ended = entries.compactMap { id, entry in entry.ended.map { (id: id, ended: $0) } }.sorted { $0.ended > $1.ended }
        let expired = ended.enumerated().filter { $0.offset >= keeping || $0.element.ended < cutoff }.map(\.element.id)
        return expired.compactMap { entries.removeValue(forKey: $0)?.path }
    }
}

/// Where a render reads a song: its blob, else one of its files below a library root, opened
/// safely, checked against the song's SHA-256 (hashed by the ``SongProbe``) and kept open for
/// the render.
final class SongFiles: Sendable {
    let library: Library
    let blobs: SongBlobs
    let roots: LibraryRoots
    let probe: any SongProbe
    let opened = Mutex<[LibraryFile]>([])

    init(library: Library, blobs: SongBlobs, roots: LibraryRoots, probe: any SongProbe) {
        self.library = library
        self.blobs = blobs
        self.roots = roots
        self.probe = probe
    }

    /// A path the renderer can read the song `id` (`song` in messages) from.
    func path(of id: SongID, named song: String) throws -> String {
        if blobs.contains(id) { return blobs.path(for: id) }
        for location in try library.locations(of: id) where !location.missing {
            guard let file = try? roots.open(root: location.root, relative: location.path, named: location.absolutePath),
                (try? probe.songID(of: file)) == id
            else { continue }
            opened.withLock { $0.append(file) }
            return "/proc/self/fd/\(file.descriptor)"
        }
        throw ErrorBody(
            code: .notFound,
            message: "the server does not keep the bytes of \(song): uploads are kept only until their jobs end (unless the "
                + "server runs with --keep-uploads), and no file of it is found under the library roots")
    }
}
