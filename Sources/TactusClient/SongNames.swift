import Foundation
import TactusModel
import TactusProtocol

/// The one way every command names a song: a SHA-256 or a prefix of at least 8 hex digits, a
/// file on this machine (hashed here: a server never reads its clients' files), a path the
/// library stores, or a stored file name that only one song has.
///
/// A file here is replaced by its SHA-256; every other name is sent as typed to a library's
/// `resolve` (a server's, or a library file's read service), in requests of at most
/// ``ResolveRequest/maxNames`` names and one frame's bytes. Each answer keeps the name the
/// person typed.
///
/// ```swift
/// let songs = try SongNames.resolve(["dev_039.mp3", "3f9a3f9a"]) { try client.resolve(ResolveRequest(names: $0)) }
/// ```
public enum SongNames {
    /// The resolution of each name, in order; `lookup` answers a `resolve` request's names.
    /// With `hashingFilesHere` false, a name that is a file here is sent as it is (names read
    /// from a file, whose paths are not this directory's).
    public static func resolve(
        _ names: [String], hashingFilesHere: Bool = true, using lookup: ([String]) throws -> [SongResolution]
    ) throws -> [SongResolution] {
        var answers = [SongResolution?](repeating: nil, count: names.count)
        var asked = [(index: Int, sent: String)]()
        for (index, name) in names.enumerated() {
            guard hashingFilesHere, isFile(name) else {
                asked.append((index, name))
                continue
            }
            do throws(StoreError) {
                asked.append((index, try SongID.ofFile(atPath: name).hex))
            } catch {
                answers[index] = SongResolution(name: name, error: error)
            }
        }
        let sent = asked.map(\.sent)
        var start = 0
        while start < asked.count {
            let chunk = asked[start..<batchEnd(sent, from: start)]
            let found = try lookup(chunk.map(\.sent))
            guard found.count == chunk.count else {
                throw ClientError.unexpectedReply(expected: "\(chunk.count) resolved names", received: "\(found.count)")
            }
            for (entry, answer) in zip(chunk, found) {
                var answer = answer
                if answer.by == .id && entry.sent != names[entry.index] { answer.by = .content }
                if answer.problem?.code == .notFound {
                    if entry.sent != names[entry.index] {
                        let file = names[entry.index]
                        answer.problem?.message = "\(file): no song in the library has this file's content (SHA-256 \(entry.sent))"
                    } else if entry.sent.contains("/") {
                        answer.problem?.message = "\(entry.sent): no such file here, and no song in the library has this path"
                    }
                }
                answer.name = names[entry.index]
                answers[entry.index] = answer
            }
            start += chunk.count
        }
        return answers.map { $0! }
    }

    /// The end of the batch of `names` that starts at `start`: at most ``ResolveRequest/maxNames``
    /// names, and few enough bytes that the request's body, each byte escaped as JSON at worst
    /// (6 bytes), stays within the frame a server takes (``ProtocolLimits/maxRequestFrameBytes``).
    static func batchEnd(_ names: [String], from start: Int) -> Int {
        var end = start
        var bytes = 0
        while end < names.count && end - start < ResolveRequest.maxNames {
            bytes += 6 * names[end].utf8.count + 3
            guard end == start || bytes < ProtocolLimits.maxRequestFrameBytes - 1024 else { break }
            end += 1
        }
        return end
    }

    /// Whether `name` is a regular file (or a link to one) on this machine.
    public static func isFile(_ name: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: name, isDirectory: &isDirectory) && !isDirectory.boolValue
    }
}
