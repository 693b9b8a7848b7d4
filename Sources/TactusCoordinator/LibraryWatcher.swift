import Foundation
import Logging
import Synchronization
import TactusLibraryRoots

#if canImport(Glibc)
import Glibc
#endif

/// Watches the library roots with inotify (`tactus serve --watch`, `tactus scan --db --watch`)
/// and asks for a scan of what changed: a file closed after writing (`IN_CLOSE_WRITE`), moved in or out
/// (`IN_MOVED_TO`, `IN_MOVED_FROM`), deleted (`IN_DELETE`), and a directory created or moved
/// in (watched at once, and scanned whole, since files may land in it before its watch exists).
/// When the kernel's queue overflows (`IN_Q_OVERFLOW`), every root is scanned again.
///
/// Events are gathered for ``settle`` after the last one before they are handed over, so a
/// burst of changes (a folder copied in) becomes one scan; changes that never pause are handed
/// over every ``maximumWait``, and more than ``maximumPaths`` changed paths become a scan of
/// every root, as an overflow does (a local user creating and deleting files with long unique
/// names as fast as they can must not grow the coordinator's memory, nor a scan of each name:
/// attack round 7); such scans of every root are asked for at most once every
/// ``everythingInterval``, so that a flood that never stops does not keep the roots scanned
/// back to back. Directories are watched without
/// following symbolic links: each is opened one component at a time from its root
/// (``LibraryRoots/openDirectory(_:)``), watched and listed through that descriptor, so a folder
/// swapped for a link to `/` between its creation and its watch is refused rather than followed
/// (15,533 directories of `/usr` were watched that way, and inotify watches are the user's).
///
/// A watched folder moved out of the roots or deleted (`IN_MOVE_SELF`, `IN_DELETE_SELF`) loses its
/// watches and those below it (found through the folders each watch holds, each checked to be
/// gone from its path first, so a folder moved within the roots keeps its watches at its new
/// path, and a new folder at the old path keeps its own). A root renamed away, deleted or
/// unmounted is logged and watched again, and scanned whole, once its path is a directory on the
/// same file system again (looked for every ``rootRetry``); meanwhile what the library holds
/// below it stays, as a scan keeps it for a root it cannot open. `mv Music Music.old; mkdir
/// Music` left the watcher blind, and 20,000 folders moved out kept their watches (attack round
/// 8, M3 and L2).
public final class LibraryWatcher: @unchecked Sendable {
    private let descriptor: Int32
    private let roots: LibraryRoots
    /// Called on the watcher's thread with the paths that changed (nil: every root).
    private let changed: @Sendable ([String]?) -> Void
    private let logger: Logger
    /// How long after the last event the changes are handed over.
    let settle: Duration
    /// The longest changes are gathered while events keep coming.
    static let maximumWait = Duration.seconds(5)
    /// The most changed paths gathered (and queued for one scan: ``Coordinator/scanChanged(_:)``);
    /// beyond them, every root is scanned instead.
    public static let maximumPaths = 4096
    /// This watcher's bound on the changed paths it gathers (``maximumPaths`` unless a test
    /// asks for fewer).
    let pathLimit: Int
    /// The paths to scan once `added` (nil: every root) joins `pending` (empty: every root):
    /// every root when either is, or when together they are more than ``maximumPaths``.
    static func union(_ pending: Set<String>, _ added: [String]?) -> Set<String> {
        guard let added, !pending.isEmpty else { return [] }
        let union = pending.union(added)
        return union.count > maximumPaths ? [] : union
    }

    /// The shortest time between two scans of every root this watcher asks for.
    public static let everythingInterval = Duration.seconds(60)
    /// This watcher's (``everythingInterval`` unless a test asks for less).
    let everythingInterval: Duration
    /// Watch descriptors and the directories they watch; touched only by the watcher thread
    /// after ``init``.
    private var directories: [Int32: String] = [:]
    /// How many folders below its root each watched directory is, by watch descriptor.
    private var depths: [Int32: Int] = [:]
    /// The device and inode of each watched directory, by watch descriptor: what tells a folder
    /// moved within the roots (watched again at its new path, with the same descriptor) from one
    /// moved out.
    private var identities: [Int32: FileIdentity] = [:]
    /// The watches of the folders each watched directory held when it was watched (some may
    /// have moved since: each is checked before it is removed with its parent).
    private var children: [Int32: Set<Int32>] = [:]
    /// The watch of each root's own folder, and the device each root was on when first watched.
    private var rootWatches: [Int32: String] = [:]
    private var rootDevices: [String: UInt64] = [:]
    /// The roots whose own watch was lost (renamed away, deleted, unmounted), looked for again
    /// every ``rootRetry``.
    private var lostRoots: Set<String> = []
    /// The directories watched now, for tests (the watcher's own maps are its thread's).
    private let watchCount = Atomic<Int>(0)
    /// How often a lost root is looked for.
    static let rootRetry = Duration.seconds(1)

    /// A file's device and inode.
    struct FileIdentity: Equatable {
        var device: UInt64
        var inode: UInt64

        init(_ status: stat) {
            device = UInt64(status.st_dev)
            inode = UInt64(status.st_ino)
        }
    }
    private let stopped = Atomic<Bool>(false)
    private var thread: Thread?

    private static let fileEvents = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CREATE)
    /// What each directory is watched for; it is watched through `/proc/self/fd/N` of its open
    /// descriptor, a link the kernel resolves to the directory opened.
    private static let mask = fileEvents | UInt32(IN_DELETE_SELF | IN_MOVE_SELF) | UInt32(IN_ONLYDIR)

    /// Starts watching every directory below `roots`, calling `changed` (on the watcher's
    /// thread) with the paths that changed once they settle, nil for every root.
    public init(
        roots: [String], logger: Logger, settle: Duration = .milliseconds(300), pathLimit: Int = LibraryWatcher.maximumPaths,
        everythingInterval: Duration = LibraryWatcher.everythingInterval, changed: @escaping @Sendable ([String]?) -> Void
    ) throws {
        self.pathLimit = min(max(pathLimit, 1), Self.maximumPaths)
        self.everythingInterval = min(everythingInterval, Self.everythingInterval)
        descriptor = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard descriptor >= 0 else {
            throw CoordinatorError(message: "cannot start watching the library roots: inotify: \(String(cString: strerror(errno)))")
        }
        self.changed = changed
        self.logger = logger
        self.settle = settle
        self.roots = LibraryRoots(roots)
        for root in self.roots.directories {
            watchTree(root, depth: 0)
        }
        logger.info("watching the library roots", metadata: ["roots": "\(roots.joined(separator: ", "))", "directories": "\(directories.count)"])
        let thread = Thread { [self] in run() }
        thread.name = "tactus-watch"
        self.thread = thread
        thread.start()
    }

    deinit {
        close(descriptor)
    }

    /// Ends the watching thread (within a poll interval).
    public func stop() {
        stopped.store(true, ordering: .sequentiallyConsistent)
    }

    /// Watches `directory`, `depth` folders below its root (held by the watched folder `parent`),
    /// and every real directory below it down to the depth a scan walks (``LibraryWalk/maxDepth``);
    /// what cannot be watched is logged (a scan still finds it).
    func watchTree(_ directory: String, depth: Int, parent: Int32? = nil) {
        let opened: Int32
        do throws(LibraryRootsError) {
            opened = try roots.openDirectory(directory)
        } catch {
            logger.warning("not watching a directory", metadata: ["directory": "\(directory)", "error": "\(error)"])
            return
        }
        defer { close(opened) }
        let watch = inotify_add_watch(descriptor, "/proc/self/fd/\(opened)", Self.mask)
        guard watch >= 0 else {
            logger.warning(
                "cannot watch a directory", metadata: ["directory": "\(directory)", "error": "\(String(cString: strerror(errno)))"])
            return
        }
        directories[watch] = directory
        depths[watch] = depth
        watchCount.store(directories.count, ordering: .relaxed)
        var status = stat()
        if fstat(opened, &status) == 0 { identities[watch] = FileIdentity(status) }
        if let parent { children[parent, default: []].insert(watch) }
        if depth == 0 {
            rootWatches[watch] = directory
            if rootDevices[directory] == nil { rootDevices[directory] = identities[watch]?.device }
        }
        for name in Self.subdirectories(of: opened) where !name.hasPrefix(".") {
            let path = directory + "/" + name
            guard depth < LibraryWalk.maxDepth else {
                logger.warning(
                    "not watching a directory: more folders below its root than a scan looks into",
                    metadata: ["directory": "\(path)", "depth": "\(depth + 1)", "limit": "\(LibraryWalk.maxDepth)"])
                continue
            }
            watchTree(path, depth: depth + 1, parent: watch)
        }
    }

    /// The directories watched now.
    var watchedCount: Int { watchCount.load(ordering: .relaxed) }

    /// The names of the real directories (not links to one) in the open directory `directory`.
    private static func subdirectories(of directory: Int32) -> [String] {
        let listed = dup(directory)
        guard listed >= 0, let stream = fdopendir(listed) else {
            if listed >= 0 { close(listed) }
            return []
        }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard name != ".", name != ".." else { continue }
            var status = stat()
            guard fstatat(directory, name, &status, AT_SYMLINK_NOFOLLOW) == 0, status.st_mode & S_IFMT == S_IFDIR else { continue }
            names.append(name)
        }
        return names
    }

    private func run() {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var changed = Set<String>()
        var everything = false
        var lastEvent: ContinuousClock.Instant?
        var firstEvent: ContinuousClock.Instant?
        var lastEverything: ContinuousClock.Instant?
        var lastRootRetry = ContinuousClock.now
        while !stopped.load(ordering: .sequentiallyConsistent) {
            var poll = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            _ = Glibc.poll(&poll, 1, 100)
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress!, $0.count) }
            if count > 0 {
                lastEvent = .now
                if firstEvent == nil { firstEvent = lastEvent }
                parse(buffer, count: count, changed: &changed, everything: &everything)
                if changed.count > pathLimit {
                    everything = true
                    changed = []
                }
            }
            if !lostRoots.isEmpty, ContinuousClock.now - lastRootRetry >= Self.rootRetry {
                lastRootRetry = .now
                if watchLostRoots(changed: &changed, everything: everything) {
                    lastEvent = .now
                    if firstEvent == nil { firstEvent = lastEvent }
                }
            }
            let now = ContinuousClock.now
            if let last = lastEvent, let first = firstEvent, now - last >= settle || now - first >= Self.maximumWait,
                !everything || lastEverything.map({ now - $0 >= everythingInterval }) ?? true
            {
                if everything { lastEverything = now }
                self.changed(everything ? nil : Array(changed))
                changed.removeAll()
                everything = false
                lastEvent = nil
                firstEvent = nil
            }
        }
    }

    /// Adds the paths the events in `buffer` name to `changed`.
    private func parse(_ buffer: [UInt8], count: Int, changed: inout Set<String>, everything: inout Bool) {
        buffer.withUnsafeBytes { raw in
            var offset = 0
            let header = MemoryLayout<inotify_event>.size
            while offset + header <= count {
                let event = raw.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                let nameBytes = raw[(offset + header)..<min(offset + header + Int(event.len), count)]
                let name = String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self)
                offset += header + Int(event.len)
                if event.mask & UInt32(IN_Q_OVERFLOW) != 0 {
                    logger.warning("the watch queue overflowed: scanning every root again")
                    everything = true
                    continue
                }
                if event.mask & UInt32(IN_IGNORED) != 0 {
                    // The kernel dropped the watch (its folder deleted, or unmounted).
                    if let root = rootWatches[event.wd] { lose(root: root) }
                    forget(event.wd)
                    continue
                }
                if event.mask & UInt32(IN_MOVE_SELF | IN_DELETE_SELF) != 0 {
                    folderGone(event.wd, changed: &changed, everything: everything)
                    continue
                }
                guard let directory = directories[event.wd], !name.isEmpty, !name.hasPrefix(".") else { continue }
                let path = directory + "/" + name
                let isDirectory = event.mask & UInt32(IN_ISDIR) != 0
                if isDirectory, event.mask & UInt32(IN_CREATE | IN_MOVED_TO) != 0 {
                    let depth = (depths[event.wd] ?? 0) + 1
                    if depth <= LibraryWalk.maxDepth { watchTree(path, depth: depth, parent: event.wd) }
                    if !everything { changed.insert(path) }
                } else if isDirectory || event.mask & UInt32(IN_CREATE) == 0 {
                    // A file created is scanned once it is closed (IN_CLOSE_WRITE), not half written.
                    if !everything { changed.insert(path) }
                }
            }
        }
    }

    // MARK: Folders and roots that go away

    /// Whether the folder of `watch` is at its path still (watched again there after a move
    /// within the roots, or moved back).
    private func isAtItsPath(_ watch: Int32, _ path: String) -> Bool {
        var status = stat()
        guard let identity = identities[watch], lstat(path, &status) == 0 else { return false }
        return FileIdentity(status) == identity
    }

    /// The watched folder of `watch` moved or was deleted. A root's is lost (and its watches
    /// removed unless the folder is watched elsewhere in the roots now). Any other, unless at its
    /// path still, loses its watches and those below it, and its path is scanned.
    private func folderGone(_ watch: Int32, changed: inout Set<String>, everything: Bool) {
        if let root = rootWatches[watch] {
            guard !isAtItsPath(watch, root) else { return }
            rootWatches[watch] = nil
            lose(root: root)
            if directories[watch] == root { unwatchTree(watch) }
            return
        }
        guard let directory = directories[watch], !isAtItsPath(watch, directory) else { return }
        unwatchTree(watch)
        if !everything { changed.insert(directory) }
    }

    /// Removes the watch `watch` and those of the folders it held, except a folder watched
    /// elsewhere now (moved within the roots) or a root's; the cost is the tree's, not every watch's.
    private func unwatchTree(_ watch: Int32) {
        var stack = [watch]
        while let next = stack.popLast() {
            for child in children[next] ?? [] where child != watch && rootWatches[child] == nil {
                guard let path = directories[child], !isAtItsPath(child, path) else { continue }
                stack.append(child)
            }
            inotify_rm_watch(descriptor, next)
            forget(next)
        }
    }

    /// Records that the root `root` is no longer watched. What the library holds below it stays
    /// until the root is back (a drive unplugged for a minute): then it is scanned whole.
    private func lose(root: String) {
        guard lostRoots.insert(root).inserted else { return }
        logger.warning(
            "a library root was moved, deleted or unmounted: it is watched again, and scanned, once its path is a directory on the same file system again",
            metadata: ["root": "\(root)"])
    }

    /// Watches again each lost root whose path is a directory on the device it was first
    /// watched on (not the empty folder an unmounted drive leaves), asking for a scan of it whole
    /// (files may have come before its watch); whether one was.
    private func watchLostRoots(changed: inout Set<String>, everything: Bool) -> Bool {
        var found = false
        for root in lostRoots {
            guard let opened = try? roots.openDirectory(root) else { continue }
            var status = stat()
            let onItsDevice = fstat(opened, &status) == 0 && rootDevices[root].map { $0 == FileIdentity(status).device } ?? true
            close(opened)
            guard onItsDevice else { continue }
            lostRoots.remove(root)
            watchTree(root, depth: 0)
            logger.info("watching a library root again", metadata: ["root": "\(root)"])
            if !everything { changed.insert(root) }
            found = true
        }
        return found
    }

    /// Forgets the watch `watch` (removed by the kernel or by this watcher).
    private func forget(_ watch: Int32) {
        directories[watch] = nil
        depths[watch] = nil
        identities[watch] = nil
        children[watch] = nil
        rootWatches[watch] = nil
        watchCount.store(directories.count, ordering: .relaxed)
    }
}
