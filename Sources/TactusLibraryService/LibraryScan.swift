import Foundation
import TactusLibraryRoots
import TactusModel
import TactusProtocol
import TactusStore

/// One scan of the library roots (or of paths below them) against what the library records:
/// what a server's coordinator runs for `tactus scan` and `serve --watch` (off its poll loop,
/// queuing jobs for its workers), and what `tactus scan --db` runs in its own process
/// (analysing the songs itself), so both classify files the same way.
///
/// In three steps: ``plan(paths:)`` walks the directories (never following symbolic links)
/// and reads the stored locations below them; ``look(at:)`` takes each file in turn: one whose
/// size and modification time are those stored is unchanged without being read; any other is
/// opened safely, hashed in bounded pieces (unless a worker hashed it: an ``Identity``) and
/// prepared (``Library/identify(_:limit:song:hash:probe:)``, then
/// the analyses still to do), its location recorded when no analysis is needed (the caller
/// records it with the analyses or their jobs otherwise); a file refused for its content (not
/// audio, corrupt, truncated, empty) is recorded as refused (``Library/RefusedFile``), and once
/// two scans in a row have refused it, listed as skipped by later scans without being read
/// while its size, modification time and the readers' revision stay the same; ``finish(_:)``
/// then treats the
/// stored locations that were not found: a song found at another path moved (its old location
/// is forgotten, its analyses stay), any other is marked missing and leaves query results.
/// ``ScanTally`` counts the outcomes into the ``ScanSummary`` both report.
public struct LibraryScan: Sendable {
    public let library: Library
    public let roots: LibraryRoots
    /// Prepares a file that must be looked at (hash, header, analyses still to do), given the
    /// file, its name, and the song it holds when a worker hashed it (nil: hash it).
    public let prepare: @Sendable (LibraryFile, String, SongID?) throws -> Preparation

    /// A file looked at: its song's record, where it lies, whether the library had the song,
    /// and the analyses still to do (by detector and parameters).
    public struct Preparation: Sendable {
        public var song: SongRecord
        public var location: SongLocation
        public var songWasKnown: Bool
        public var requests: [JobRequest]
        /// Whether the song is the one a worker hashed (an ``Identity``), not hashed here.
        public var hashedByWorker = false

        public init(song: SongRecord, location: SongLocation, songWasKnown: Bool, requests: [JobRequest]) {
            self.song = song
            self.location = location
            self.songWasKnown = songWasKnown
            self.requests = requests
        }
    }

    /// `prepare` prepares a file whose size or modification time is not the one stored.
    public init(
        library: Library, roots: LibraryRoots, prepare: @escaping @Sendable (LibraryFile, String, SongID?) throws -> Preparation
    ) {
        self.library = library
        self.roots = roots
        self.prepare = prepare
    }


    /// A file found on disk, below its root.
    public struct Found: Sendable {
        public var root: String
        public var entry: LibraryWalk.Entry
        /// The location the library stored for its path, if any.
        public var stored: StoredPlace?
        /// Whether a scan refused the file for its content at its present size and modification
        /// time: it is skipped again without being read.
        public var refusedBefore = false

        public var absolutePath: String { root + "/" + entry.relative }

        /// Whether the file must be read: it is neither unchanged nor refused before.
        public var needsReading: Bool { !isUnchanged && !refusedBefore }

        /// Whether its size, modification time and inode change time are those stored (the
        /// change time when one was recorded): unchanged, not read.
        public var isUnchanged: Bool {
            guard let stored, !stored.location.missing else { return false }
            return stored.location.byteSize == entry.size && stored.location.mtimeNs == entry.mtimeNs
                && stored.location.ctimeNs.map { $0 == entry.ctimeNs } ?? true
        }
    }

    /// The song and location the library stored for a path, kept apart from the ``Found``
    /// file so that each of the files it does not know (all of them, on a first scan of a
    /// large root) costs a pointer rather than the location's fields.
    public final class StoredPlace: Sendable {
        public let song: SongID
        public let location: SongLocation

        public init(song: SongID, location: SongLocation) {
            self.song = song
            self.location = location
        }
    }

    /// The SHA-256 of a file as another process (a worker sharing the root) found it, with the
    /// size and modification time the file had then.
    ///
    /// It is taken on the worker's word only where a wrong one does no lasting harm: the file
    /// still has that size and time when the scan opens it, the bytes are new to the library,
    /// and analyses are queued for them, so the worker that analyses the file checks its
    /// SHA-256 again (and a mismatch, `song-changed`, makes the next scan hash the file:
    /// ``Library/rescanLocations(of:)``). A file whose claimed song the library knows (a move,
    /// a copy, the same bytes touched), or that needs no analysis, is hashed by the scan itself,
    /// as is any file whose size or time changed.
    public struct Identity: Sendable, Hashable {
        public var song: SongID
        public var size: Int
        public var mtimeNs: Int64

        public init(song: SongID, size: Int, mtimeNs: Int64) {
            self.song = song
            self.size = size
            self.mtimeNs = mtimeNs
        }
    }

    /// What the walk found: the files, what was skipped, and the stored locations below the
    /// scanned directories that no file matched.
    public struct Plan: Sendable {
        public var files: [Found] = []
        /// The first of the files skipped by the walk (links, devices...); ``skippedCount``
        /// counts them all.
        public var skipped: [ScanSkip] = []
        public var skippedCount = 0
        public var unseen: [(song: SongID, location: SongLocation)] = []
    }

    /// What one file came to.
    public enum Outcome: Sendable {
        /// Size and modification time as stored (or the bytes as stored, the time changed).
        case unchanged
        /// Bytes the library knows at a new path (a move or a copy, told apart by ``finish(_:)``).
        case known(SongID)
        /// Analyses to do (a server queues their jobs), with the song's location: for bytes new
        /// to the library (`changed` when the path held other bytes), or for a known song at a
        /// new path (`known`) whose analyses are not all stored yet.
        case queue(Preparation, changed: Bool, known: Bool)
        /// The path is new and its song too, or the path held other bytes, and no job is needed
        /// (every analysis is stored already).
        case recorded(changed: Bool)
        case skipped(ScanSkip)
    }

    /// Walks `paths` (every root when empty) and reads the stored locations below them.
    public func plan(paths: [String]) throws -> Plan {
        var targets = [(root: String, relative: String)]()
        if paths.isEmpty {
            targets = roots.directories.map { ($0, "") }
        } else {
            for path in paths { targets.append(try roots.locate(path)) }
        }
        var plan = Plan()
        targets = Self.outermost(targets)
        for target in targets {
            var stored = [String: (song: SongID, location: SongLocation)]()
            for item in try library.locations(underRoot: target.root, prefix: target.relative) {
                stored[item.location.path] = item
            }
            let walked = Result { () throws(LibraryRootsError) in try Self.walk(roots, target.root, target.relative) }
            if case .failure(let error) = walked, targets.count > 1 || paths.isEmpty {
                // One root (or folder) that cannot be opened now (replaced by a link or a file,
                // unreadable) fails itself, not the scan of the others: it is listed as skipped,
                // and what is stored below it stays as it is until it can be read again.
                if plan.skipped.count < LibraryWalk.maxListedSkips {
                    plan.skipped.append(ScanSkip(path: Self.absolute(target.root, target.relative), reason: error.description, code: .unreadable))
                }
                plan.skippedCount += 1
                continue
            }
            guard let walk = try walked.get() else {
                // The directory (or file) asked for is gone: whatever was stored below it is missing,
                // and what was refused below it is forgotten.
                plan.unseen += stored.values
                try library.forgetRefusals(underRoot: target.root, prefix: target.relative)
                continue
            }
            plan.skipped += walk.skipped.prefix(LibraryWalk.maxListedSkips - min(plan.skipped.count, LibraryWalk.maxListedSkips))
                .map { ScanSkip(path: target.root + "/" + $0.path, reason: $0.reason) }
            plan.skippedCount += walk.skippedCount
            let refused = try refusedBefore(walk.files, root: target.root, prefix: target.relative)
            var untimed: [(path: String, ctimeNs: Int64)] = []
            for (index, entry) in walk.files.enumerated() {
                let place = stored.removeValue(forKey: entry.relative).map { StoredPlace(song: $0.song, location: $0.location) }
                let found = Found(root: target.root, entry: entry, stored: place, refusedBefore: refused[index])
                if found.isUnchanged, place?.location.ctimeNs == nil { untimed.append((entry.relative, entry.ctimeNs)) }
                plan.files.append(found)
            }
            // Locations recorded before their change times were: recorded now, for the next scan.
            try library.recordChangeTimes(atRoot: target.root, untimed)
            plan.unseen += stored.values
        }
        return plan
    }

    /// For each of `files` (found below `prefix` of `root`), whether its recorded refusal holds
    /// (``Library/RefusedFile/holds(size:mtimeNs:ctimeNs:)``). The refusals that no longer match (the
    /// file is gone, changed, or was refused by other readers) are forgotten. The files and the
    /// refusals are compared in the byte order of their paths, as SQLite sorts them, so that a
    /// root of many files costs an index per file rather than a table of their names.
    private func refusedBefore(_ files: [LibraryWalk.Entry], root: String, prefix: String) throws -> [Bool] {
        var refused = [Bool](repeating: false, count: files.count)
        var order: [Int]?
        var next = 0
        var stale: [String] = []
        try library.forEachRefusal(underRoot: root, prefix: prefix) { refusal in
            let sorted = order ?? files.indices.sorted { files[$0].relative.utf8.lexicographicallyPrecedes(files[$1].relative.utf8) }
            order = sorted
            let path = refusal.location.path.utf8
            while next < sorted.count, files[sorted[next]].relative.utf8.lexicographicallyPrecedes(path) { next += 1 }
            if next < sorted.count, case let file = files[sorted[next]], file.relative.utf8.elementsEqual(path),
                refusal.matches(size: file.size, mtimeNs: file.mtimeNs, ctimeNs: file.ctimeNs)
            {
                refused[sorted[next]] = refusal.holds(size: file.size, mtimeNs: file.mtimeNs, ctimeNs: file.ctimeNs)
            } else {
                stale.append(refusal.location.path)
            }
        }
        try library.forgetRefusals(atRoot: root, paths: stale)
        return refused
    }

    /// The refusals a scan records: about the file's own content, the same whatever the
    /// server's limits and the file's permissions (`too-large`, `too-long` and `unreadable`
    /// are not recorded: another limit or a `chmod` changes them without changing the file).
    static let recordedRefusals: Set<ErrorCode> = [.unsupportedFormat, .corrupt, .truncated, .empty]

    /// `targets` without those at or below another (a folder and a file in it both changed, the
    /// same path twice), so that no file is walked, counted or found missing twice. Shorter
    /// paths first, each kept unless it or one of its folders was: a lookup per folder of each
    /// path, not a comparison with every path kept.
    static func outermost(_ targets: [(root: String, relative: String)]) -> [(root: String, relative: String)] {
        struct Place: Hashable {
            var root: String
            var relative: Substring
        }
        var kept: [(root: String, relative: String)] = []
        var places = Set<Place>()
        for target in targets.sorted(by: { ($0.root, $0.relative.utf8.count) < ($1.root, $1.relative.utf8.count) }) {
            let relative = Substring(target.relative)
            // The path itself, each of its folders, and the root (the empty path).
            var ancestors = [relative.prefix(0), relative]
            for index in relative.indices where relative[index] == "/" { ancestors.append(relative[..<index]) }
            guard !ancestors.contains(where: { places.contains(Place(root: target.root, relative: $0)) }) else { continue }
            places.insert(Place(root: target.root, relative: relative))
            kept.append(target)
        }
        return kept
    }

    /// The absolute path of a scan's target.
    private static func absolute(_ root: String, _ relative: String) -> String {
        relative.isEmpty ? root : root + "/" + relative
    }

    /// The walk of `relative` below `root`, or nil when it does not exist.
    private static func walk(_ roots: LibraryRoots, _ root: String, _ relative: String) throws(LibraryRootsError) -> LibraryWalk? {
        do {
            return try LibraryWalk(roots: roots, root: root, relative: relative)
        } catch {
            if error.problem == .notFound { return nil }
            throw error
        }
    }

    /// Looks at one file found by the walk, with its ``Identity`` when a worker hashed it.
    public func look(at found: Found, identity: Identity? = nil) -> Outcome {
        look(at: [found], identities: [identity])[0]
    }

    /// Looks at `files` in turn, each with its ``Identity`` when a worker hashed it, and records
    /// the refusals among them in one transaction.
    public func look(at files: [Found], identities: [Identity?]) -> [Outcome] {
        var refusals: [Library.RefusedFile] = []
        let outcomes = zip(files, identities).map { look(at: $0, identity: $1, refusals: &refusals) }
        // Not recorded (a library that cannot be written): the files are read again next time.
        try? library.recordRefusals(refusals)
        return outcomes
    }

    /// Looks at `found`, adding its refusal to `refusals` when it is refused for its content.
    private func look(at found: Found, identity: Identity?, refusals: inout [Library.RefusedFile]) -> Outcome {
        if found.isUnchanged { return .unchanged }
        if found.refusedBefore, let refusal = try? library.refusal(atRoot: found.root, path: found.entry.relative),
            refusal.holds(size: found.entry.size, mtimeNs: found.entry.mtimeNs, ctimeNs: found.entry.ctimeNs)
        {
            return .skipped(ScanSkip(path: found.absolutePath, reason: refusal.message, code: refusal.code))
        }
        do {
            return try examine(found, identity: identity)
        } catch {
            let skip = ScanSkip(found.absolutePath, error)
            if let code = skip.code, Self.recordedRefusals.contains(code) {
                let location = SongLocation(
                    root: found.root, path: found.entry.relative, byteSize: found.entry.size, mtimeNs: found.entry.mtimeNs)
                refusals.append(Library.RefusedFile(location: location, ctimeNs: found.entry.ctimeNs, code: code, message: skip.reason))
            }
            return .skipped(skip)
        }
    }

    /// Opens, hashes (unless `identity` may be used: see ``Identity``) and prepares a file
    /// whose size or time is not the stored one.
    private func examine(_ found: Found, identity: Identity?) throws -> Outcome {
        let file = try roots.open(root: found.root, relative: found.entry.relative, named: found.absolutePath)
        let name = (found.entry.relative as NSString).lastPathComponent
        var prepared: Preparation
        if let identity, identity.size == file.size, identity.mtimeNs == file.mtimeNs,
            case let claimed = try prepare(file, name, identity.song), !claimed.songWasKnown, !claimed.requests.isEmpty
        {
            prepared = claimed
            prepared.hashedByWorker = true
        } else {
            prepared = try prepare(file, name, nil)
        }
        let song = prepared.song.id
        if let stored = found.stored, stored.song == song {
            // The same bytes (touched, or found again after being missing).
            try library.recordLocation(file.location, of: song)
            return .unchanged
        }
        let changed = found.stored != nil
        let known = !changed && prepared.songWasKnown
        if !prepared.requests.isEmpty { return .queue(prepared, changed: changed, known: known) }
        if known {
            try library.recordLocation(prepared.location, of: song)
            return .known(song)
        }
        // Every analysis stored already, but the song itself may be new to the library
        // (none of the requested detectors has a worker to declare it): enqueue records it.
        _ = try library.enqueue(prepared.song, jobs: [], location: file.location)
        return .recorded(changed: changed)
    }

    /// Treats the stored locations no file matched: a song present elsewhere moved (its old
    /// location is forgotten), any other is marked missing. Returns (moved, missing) and the
    /// songs that moved.
    public func finish(_ unseen: [(song: SongID, location: SongLocation)]) throws(StoreError) -> (moved: Set<SongID>, missing: Int) {
        var moved = Set<SongID>()
        var missing = 0
        for item in unseen {
            let others = try library.locations(of: item.song).filter {
                !$0.missing && !($0.root == item.location.root && $0.path == item.location.path)
            }
            if others.isEmpty {
                if !item.location.missing {
                    try library.markMissing(root: item.location.root, path: item.location.path)
                    missing += 1
                }
            } else {
                try library.removeLocation(root: item.location.root, path: item.location.path)
                moved.insert(item.song)
            }
        }
        return (moved, missing)
    }
}

/// The counts of one scan as its files are looked at, into the ``ScanSummary`` it reports.
///
/// The files skipped are counted, and the first ``ScanSummary/maxListedSkips`` of them kept
/// for the summary, however many a scan meets: a root of 600,000 junk files once took the
/// coordinator to 353 MB listing every one (attack round 6), where a reply lists 1,000.
public struct ScanTally: Sendable {
    public private(set) var summary = ScanSummary()
    /// Songs found at a new path whose bytes the library knew: moves or copies, told apart by
    /// what ``LibraryScan/finish(_:)`` found.
    private var known = [SongID]()
    /// Every file skipped so far, listed or not.
    public var skippedTotal: Int { summary.skippedTotal }
    /// The files skipped since the last ``progress(looked:seconds:)`` (the first of them).
    private var recentSkips: [ScanSkip] = []

    /// The tally of a scan whose walk found `plan`.
    public init(_ plan: LibraryScan.Plan) {
        summary.files = plan.files.count
        for skip in plan.skipped { skipped(skip) }
        // The walk lists only the first of what it skipped.
        if plan.skippedCount > summary.skipped.count { summary.skippedCount = plan.skippedCount }
    }

    /// Counts one file's outcome (a `queue` outcome once its analyses are queued or done).
    public mutating func count(_ outcome: LibraryScan.Outcome) {
        switch outcome {
        case .unchanged: summary.unchanged += 1
        case .known(let song): known.append(song)
        case .recorded(let changed): if changed { summary.changed += 1 } else { summary.new += 1 }
        case .skipped(let skip): skipped(skip)
        case .queue(let prepared, let changed, let isKnown):
            if prepared.hashedByWorker { summary.hashedByWorkers = (summary.hashedByWorkers ?? 0) + 1 }
            if isKnown {
                known.append(prepared.song.id)
            } else if changed {
                summary.changed += 1
            } else {
                summary.new += 1
            }
        }
    }

    /// Counts a file left alone because of `error` (its jobs could not be queued).
    public mutating func skip(_ found: LibraryScan.Found, _ error: any Error) {
        skipped(ScanSkip(found.absolutePath, error))
    }

    /// Counts `skip`, kept for the summary and the next progress event while they list fewer
    /// than ``ScanSummary/maxListedSkips``.
    private mutating func skipped(_ skip: ScanSkip) {
        let total = summary.skippedTotal + 1
        if summary.skipped.count < ScanSummary.maxListedSkips { summary.skipped.append(skip) }
        if recentSkips.count < ScanSummary.maxListedSkips { recentSkips.append(skip) }
        summary.skippedCount = total > summary.skipped.count ? total : nil
    }

    /// Counts `count` jobs queued (by a server) or analyses run (by `scan --db`).
    public mutating func queued(_ count: Int) { summary.queuedJobs += count }

    /// Counts a file whose analysis failed in a `scan --db` (the failure is stored).
    public mutating func failed(_ found: LibraryScan.Found, _ error: any Error) {
        summary.failed = (summary.failed ?? []) + [ScanSkip(found.absolutePath, error)]
    }

    /// The summary so far, with the files looked at and the time taken, for a `scan.progress`
    /// event: the files skipped are counted, and those since the previous event listed (at most
    /// ``ScanSummary/maxListedSkips``), so that a scan of many unreadable files does not send
    /// the same list again with every batch.
    public mutating func progress(looked: Int, seconds: Double) -> ScanSummary {
        var progress = summary
        progress.looked = looked
        progress.seconds = seconds
        progress.skippedCount = skippedTotal
        // At most as many as a reply lists, and a quarter of its bytes (an event waits, copied,
        // for every subscriber that has not read it): a folder's thousands of cover images are
        // found in one batch.
        progress.skipped = ScanSummary(skipped: recentSkips).listingSkips(bytes: ScanSummary.maxListedSkipBytes / 4).skipped
        recentSkips = []
        return progress
    }

    /// The summary once ``LibraryScan/finish(_:)`` found `moved` and `missing`.
    public func finished(moved: Set<SongID>, missing: Int, seconds: Double) -> ScanSummary {
        var summary = summary
        summary.missing = missing
        for song in known {
            if moved.contains(song) { summary.moved += 1 } else { summary.copies += 1 }
        }
        summary.seconds = seconds
        return summary
    }
}

extension ScanSkip {
    /// The file at `path`, left alone because of `error` (the code and message of its error
    /// body, see ``ErrorBody/init(answering:)``).
    init(_ path: String, _ error: any Error) {
        let body = ErrorBody(answering: error)
        self.init(path: path, reason: body.message, code: body.code)
    }
}

extension Library {
    /// The song the file below a library root holds: its size is checked against `limit` on
    /// the open descriptor before anything is read, its bytes hashed by `hash` (by default here,
    /// in bounded pieces; a server's service host) unless `song` is given (the SHA-256 a worker
    /// found for the file as it is); its record is the library's, or `probe`'s (which reads the
    /// header through the descriptor) for bytes new to the library. How a server prepares a file
    /// submitted by path or found by a scan, and how `tactus scan --db` does.
    public func identify(
        _ file: LibraryFile, limit: Int, song: SongID? = nil, hash: (LibraryFile) throws -> SongID = { try $0.songID() },
        probe: (SongID) throws -> SongRecord
    ) throws -> (record: SongRecord, known: Bool) {
        guard file.size <= limit else {
            throw ErrorBody(code: .tooLarge, message: "\(file.path): \(file.size) bytes is over the song size limit of \(limit) bytes")
        }
        let song = try song ?? hash(file)
        if let known = try self.song(song) { return (known, true) }
        return (try probe(song), false)
    }

    /// Removes the song blobs in `blobs` that no queued or running job of this library needs
    /// (kept uploads, blobs of older versions); with `dryRun`, only counts them. What a
    /// server's `prune` does, and `tactus prune --db`.
    public func prune(_ blobs: SongBlobs, dryRun: Bool) throws(StoreError) -> PruneSummary {
        let result = blobs.prune(keeping: try songsWithActiveJobs(), dryRun: dryRun)
        return PruneSummary(removed: result.removed, removedBytes: result.bytes, kept: result.kept, dryRun: dryRun)
    }
}
