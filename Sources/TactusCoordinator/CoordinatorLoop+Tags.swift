import Foundation
import TactusLibraryRoots
import TactusModel
import TactusProtocol
import TactusStore

/// The `tags` request: BPM tags of the files under the library roots, read into the library or
/// written from it by the coordinator's ``SongTagger``, on an intake thread.
extension CoordinatorLoop {
    func beginTags(_ request: TagsRequest, then answer: @escaping (Result<ClientReply.Response, any Error>) -> Void) {
        guard let tagger = coordinator.tagger else {
            return answer(.failure(ErrorBody(code: .forbidden, message: "this server does not read or write tags")))
        }
        guard intake.inFlight < Self.maxBackgroundWork else {
            return answer(.failure(ErrorBody(code: .busy, message: "the server is busy; try again shortly", retryAfterMs: 200)))
        }
        let work = TagsWork(request: request, library: library, roots: configuration.libraryRoots, tagger: tagger)
        intake.run({ Result { .tags(try work.answer()) } }, then: answer)
    }
}

/// One `tags` request's work, off the loop: each song's file found below a library root, then
/// read or written by the tagger.
struct TagsWork: Sendable {
    let request: TagsRequest
    let library: Library
    let roots: [String]
    let tagger: any SongTagger

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
                    if case .unknownSong = error { report.code = "not-found" } else { report.code = "bad-request" }
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
        guard let file = try reachableFile(of: song) else {
            return skipped.because(
                "no file of this song below the server's library roots (it was uploaded, or its files are missing): "
                    + "the server writes only files under its roots (tactus scan), tactus tags --db writes local files")
        }
        var report: TagReport
        if request.action == "read" {
            report = tagger.read(file: file, song: song, replace: request.replace ?? false, library: library)
        } else {
            // A song being analysed is not rewritten: its jobs' results would name the old bytes.
            guard try !library.jobs(of: song).contains(where: { $0.state.isActive }) else {
                var waiting = skipped.because("being analysed: write its tag once its jobs are done")
                waiting.file = file
                return waiting
            }
            let options = TagWriteOptions(
                detector: request.detector, minConfidence: request.minConfidence ?? 0, dryRun: request.dryRun ?? false,
                backup: request.backup ?? false)
            report = tagger.write(file: file, song: song, options: options, library: library)
        }
        return report
    }

    /// The path of the first present location of `song` below one of the roots whose file the
    /// roots' safe open reaches (a regular file, no symbolic link below the root).
    private func reachableFile(of song: SongID) throws -> String? {
        let roots = LibraryRoots(self.roots)
        for location in try library.locations(of: song) where !location.missing {
            let path = location.absolutePath
            if (try? roots.open(path)) != nil { return path }
        }
        return nil
    }
}
