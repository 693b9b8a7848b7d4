import Foundation
import TactusLibraryRoots
import TactusProtocol

/// Answers IDENTIFY: the SHA-256, size and modification time of files below the worker's
/// library roots, opened as a JOB's location is (below a declared root, never through a
/// symbolic link) and read in pieces of 1 MiB.
///
/// It runs on the thread that heartbeats, so it stops once ``timeBudget`` has passed, between
/// two pieces: the file being hashed and the files left are answered `unavailable`, and the
/// coordinator hashes them itself.
struct FileIdentifier {
    let roots: LibraryRoots
    /// How long one request may take before the files left are refused.
    var timeBudget: Duration = .seconds(1)

    /// The answer to `request`, one entry per file in its order.
    func answer(_ request: IdentifyBody) -> IdentifiedBody {
        let deadline = ContinuousClock.now + timeBudget
        return IdentifiedBody(request: request.request, files: request.files.map { identity(of: $0, before: deadline) })
    }

    private func identity(of location: JobLocation, before deadline: ContinuousClock.Instant) -> FileIdentity {
        let name = "\(location.root)/\(location.path)"
        guard ContinuousClock.now < deadline else {
            return FileIdentity(error: ErrorBody(LibraryRootsError(path: name, problem: .outOfTime)))
        }
        do throws(LibraryRootsError) {
            let file = try roots.open(root: location.root, relative: location.path, named: name)
            let song = try file.songID(before: deadline)
            return FileIdentity(sha256: song, size: Int64(file.size), mtimeNs: file.mtimeNs)
        } catch {
            return FileIdentity(error: ErrorBody(error))
        }
    }
}
