import Foundation
import TactusLibraryRoots
import TactusLibraryService
import TactusModel
import TactusProtocol
import TactusStore

/// The `tags` request: BPM tags of the files under the library roots, read into the library or
/// written from it (``LibraryTags``) through the coordinator's ``SongTagger``, on one of the
/// loop's intake threads. Keeps no state between requests.
struct TagsService: RequestService {
    let coordinator: Coordinator

    /// Routes `tags` to this service.
    func route(into routes: inout RequestRoutes) {
        routes.on(TagsCommand.self) { loop, request, _, answer in begin(request, on: loop.intake, then: answer) }
    }

    func begin(_ request: TagsRequest, on pool: BackgroundWork, then answer: @escaping RequestRoutes.Answer) {
        guard let tagger = coordinator.tagger else {
            return answer(.failure(ErrorBody(code: .forbidden, message: "this server does not read or write tags")))
        }
        guard pool.inFlight < CoordinatorLoop.maxBackgroundWork else {
            return answer(.failure(ErrorBody(code: .busy, message: "the server is busy; try again shortly", retryAfterMs: 200)))
        }
        let work = TagsWork(request: request, library: coordinator.library, roots: coordinator.libraryRoots, tagger: tagger) {
            [coordinator] paths in coordinator.scanChanged(paths)
        }
        pool.run({ Result { .tags(try work.answer()) } }, then: answer)
    }
}

/// One `tags` request's work, off the loop: each song's file opened below a library root with
/// its folder (no symbolic link followed), then read or written through those descriptors by
/// the tagger, the library part done here.
struct TagsWork: Sendable {
    let request: TagsRequest
    let library: Library
    let roots: LibraryRoots
    let tagger: any SongTagger
    /// Asks for a scan of files (the other copies of a song whose file was rewritten).
    let rescan: @Sendable ([String]) -> Void

    func answer() throws -> TagsResponse {
        var reports = [TagReport]()
        var total: Int?
        if request.all == true {
            total = try library.counts().songs
            for song in try library.songIDs(offset: request.offset ?? 0, limit: request.limit ?? TagsRequest.maxSongs) {
                reports.append(try report(for: song))
            }
        } else {
            for name in request.songs ?? [] {
                let song: SongID
                do throws(StoreError) {
                    song = try library.resolveSongID(name)
                } catch {
                    var report = TagReport(file: nil, song: nil, outcome: .failed).because(error.description)
                    report.code = if case .unknownSong = error { .notFound } else { .badRequest }
                    reports.append(report)
                    continue
                }
                reports.append(try report(for: song))
            }
        }
        return TagsResponse(files: reports, total: total)
    }

    private func report(for song: SongID) throws -> TagReport {
        let skipped = TagReport(file: nil, song: song, outcome: .skipped)
        let entry: LibraryEntry
        switch try reachableEntry(of: song) {
        case .none:
            return skipped.because(
                "no file of this song below the server's library roots (it was uploaded, or its files are missing): "
                    + "the server writes only files under its roots (tactus scan), tactus tags --db writes local files")
        case .refused(let file, let error):
            var refused = TagReport(file: file, song: song, outcome: .failed).because(error.description)
            refused.code = error.code
            return refused
        case .opened(let opened):
            entry = opened
        }
        // The song's other copies below the roots are scanned again (a copy under a root the
        // server no longer has would fail the scan it joins).
        let tags = LibraryTags(library: library, tagger: tagger) { [roots, rescan] copies in
            let below = copies.filter { roots.directories.contains($0.root) }
            if !below.isEmpty { rescan(below.map(\.absolutePath)) }
        }
        if request.action == "read" {
            return tags.read(entry, expected: song, replace: request.replace ?? false)
        }
        // A song being analysed is not rewritten: its jobs' results would name the old bytes.
        guard try !library.jobs(of: song).contains(where: { $0.state.isActive }) else {
            var waiting = skipped.because("being analysed: write its tag once its jobs are done")
            waiting.file = entry.file.path
            return waiting
        }
        let options = TagWriteOptions(
            detector: request.detector, minConfidence: request.minConfidence ?? 0, dryRun: request.dryRun ?? false,
            backup: request.backup ?? false)
        return tags.write(entry, expected: song, options: options)
    }

    /// Where a song's file below the roots was found.
    private enum Reach {
        /// No present location below the roots.
        case none
        /// The first present location, refused by the safe open (a symbolic link, not a regular file).
        case refused(file: String, LibraryRootsError)
        /// The first present location that the safe open reached, open with its folder.
        case opened(LibraryEntry)
    }

    /// The first present location of `song` below one of the roots whose file the roots' safe
    /// open reaches (a regular file, no symbolic link below the root), opened with its folder;
    /// when none does, the first refusal that is not a missing file.
    private func reachableEntry(of song: SongID) throws -> Reach {
        var reach = Reach.none
        for location in try library.locations(of: song) where !location.missing {
            let path = location.absolutePath
            do throws(LibraryRootsError) {
                return .opened(try roots.openEntry(path))
            } catch {
                // A file gone since the last scan: the next location may be there.
                if error.problem != .notFound, case .none = reach { reach = .refused(file: path, error) }
            }
        }
        return reach
    }
}
