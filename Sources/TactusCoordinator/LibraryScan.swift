import Foundation
import TactusLibraryRoots
import TactusModel
import TactusProtocol
import TactusStore

/// One scan of the library roots (or of paths below them) against what the library records.
///
/// In three steps, each run off the poll loop: ``plan(paths:)`` walks the directories (never
/// following symbolic links) and reads the stored locations below them; ``look(at:)`` takes
/// each file in turn: one whose size and modification time are those stored is unchanged
/// without being read; any other is opened safely, hashed in bounded pieces and prepared as a
/// submission (``SubmissionIntake/prepare(_:name:)``), its location recorded when no job is
/// needed (the loop records it with the jobs otherwise); ``finish(_:)`` then treats the stored
/// locations that were not found: a song found at another path moved (its old location is
/// forgotten, its analyses stay), any other is marked missing and leaves query results.
struct LibraryScan: Sendable {
    let library: Library
    let roots: LibraryRoots
    /// Prepares a file that must be looked at (hash, header, jobs still to do).
    let prepare: @Sendable (LibraryFile, String) throws -> PreparedSubmission

    /// A file found on disk, below its root.
    struct Found: Sendable {
        var root: String
        var entry: LibraryWalk.Entry
        var stored: (song: SongID, location: SongLocation)?

        var absolutePath: String { root + "/" + entry.relative }
    }

    /// What the walk found: the files, what was skipped, and the stored locations below the
    /// scanned directories that no file matched.
    struct Plan: Sendable {
        var files: [Found] = []
        var skipped: [ScanSkip] = []
        var unseen: [(song: SongID, location: SongLocation)] = []
    }

    /// What one file came to.
    enum Outcome: Sendable {
        /// Size and modification time as stored (or the bytes as stored, the time changed).
        case unchanged
        /// Bytes the library knows at a new path (a move or a copy, told apart by ``finish(_:)``).
        case known(SongID)
        /// Jobs to queue, with the song's location: for bytes new to the library (`changed` when
        /// the path held other bytes), or for a known song at a new path (`known`) whose
        /// analyses are not all stored yet.
        case queue(PreparedSubmission, changed: Bool, known: Bool)
        /// The path is new and its song too, or the path held other bytes, and no job is needed
        /// (every analysis is stored already).
        case recorded(changed: Bool)
        case skipped(ScanSkip)
    }

    /// Walks `paths` (every root when empty) and reads the stored locations below them.
    func plan(paths: [String]) throws -> Plan {
        var targets = [(root: String, relative: String)]()
        if paths.isEmpty {
            targets = roots.directories.map { ($0, "") }
        } else {
            for path in paths { targets.append(try roots.locate(path)) }
        }
        var plan = Plan()
        for target in targets {
            var stored = [String: (song: SongID, location: SongLocation)]()
            for item in try library.locations(underRoot: target.root, prefix: target.relative) {
                stored[item.location.path] = item
            }
            guard let walk = try Self.walk(roots, target.root, target.relative) else {
                // The directory (or file) asked for is gone: whatever was stored below it is missing.
                plan.unseen += stored.values
                continue
            }
            plan.skipped += walk.skipped.map { ScanSkip(path: target.root + "/" + $0.path, reason: $0.reason) }
            for entry in walk.files {
                plan.files.append(Found(root: target.root, entry: entry, stored: stored.removeValue(forKey: entry.relative)))
            }
            plan.unseen += stored.values
        }
        return plan
    }

    /// The walk of `relative` below `root`, or nil when it does not exist.
    private static func walk(_ roots: LibraryRoots, _ root: String, _ relative: String) throws(ErrorBody) -> LibraryWalk? {
        do {
            return try LibraryWalk(roots: roots, root: root, relative: relative)
        } catch {
            if error.code == .notFound { return nil }
            throw error
        }
    }

    /// Looks at one file found by the walk.
    func look(at found: Found) -> Outcome {
        if let stored = found.stored, !stored.location.missing, stored.location.byteSize == found.entry.size,
            stored.location.mtimeNs == found.entry.mtimeNs
        {
            return .unchanged
        }
        do {
            return try examine(found)
        } catch {
            let body = error as? ErrorBody ?? ErrorBody(code: .internal, message: "\(error)")
            return .skipped(ScanSkip(path: found.absolutePath, reason: body.message, code: body.code))
        }
    }

    /// Opens, hashes and prepares a file whose size or time is not the stored one.
    private func examine(_ found: Found) throws -> Outcome {
        let file = try roots.open(root: found.root, relative: found.entry.relative, named: found.absolutePath)
        let prepared = try prepare(file, (found.entry.relative as NSString).lastPathComponent)
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
            try library.recordLocation(file.location, of: song)
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
    func finish(_ unseen: [(song: SongID, location: SongLocation)]) throws(StoreError) -> (moved: Set<SongID>, missing: Int) {
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
