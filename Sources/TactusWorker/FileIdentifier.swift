import Foundation
import TactusLibraryRoots
import TactusProtocol

/// Answers IDENTIFY: the SHA-256, size and modification time of files below the worker's
/// library roots, opened as a JOB's location is (below a declared root, never through a
/// symbolic link) and read in bounded pieces.
///
/// It runs on the thread that heartbeats, so it stops hashing once ``timeBudget`` has passed:
/// the files left are answered `unavailable` and the coordinator hashes them itself.
struct FileIdentifier {
    let roots: LibraryRoots
    /// How long one request may take before the files left are refused.
    var timeBudget: Duration = .seconds(1)

    /// The answer to `request`, one entry per file in its order.
    func answer(_ request: IdentifyBody) -> IdentifiedBody {
        let deadline = ContinuousClock.now + timeBudget
        let files = request.files.map { location -> FileIdentity in
            guard ContinuousClock.now < deadline else {
                return FileIdentity(
                    error: ErrorBody(code: .unavailable, message: "\(location.root)/\(location.path): not hashed (the worker's time for this request ran out)"))
            }
            return identity(of: location)
        }
        return IdentifiedBody(request: request.request, files: files)
    }

    private func identity(of location: JobLocation) -> FileIdentity {
        do throws(ErrorBody) {
            let file = try roots.open(root: location.root, relative: location.path, named: "\(location.root)/\(location.path)")
            let song = try file.songID()
            return FileIdentity(sha256: song.hex, size: Int64(file.size), mtimeNs: file.mtimeNs)
        } catch {
            return FileIdentity(error: error)
        }
    }
}
