import Foundation
import TactusModel

/// The audio files among paths: files as named, directories searched recursively in name
/// order, audio recognised by content (``AudioStream`` reads the header), whatever the names.
///
/// ```swift
/// let found = AudioFiles.find(["~/Music", "song.mp3"])
/// for file in found.files { ... }
/// ```
public struct AudioFiles: Sendable {
    /// A path that is not an audio file to send, with a stable code (an ``AudioError`` code)
    /// and a sentence for people naming it.
    public struct Problem: Sendable, Hashable {
        /// The path as named.
        public var file: String
        /// `unreadable`, `empty` or `unsupported-format`.
        public var code: ErrorCode
        /// A sentence naming the file.
        public var message: String
    }

    /// The audio files, in the order found.
    public var files: [String] = []
    /// Named files that are not audio or cannot be read, and named paths that do not exist.
    public var problems: [Problem] = []
    /// Files found in directories that are not sent, each with why: not audio
    /// (`unsupported-format`, `empty`), or `unreadable` (no permission, a symbolic link that
    /// leads nowhere or loops, a folder that cannot be listed, a name that is not UTF-8, shown
    /// with its bytes escaped: ``TactusModel/FileName``).
    public var skipped: [Problem] = []

    /// Searches `paths`.
    public static func find(_ paths: [String]) -> AudioFiles {
        var found = AudioFiles()
        for path in paths {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                found.problems.append(Problem(file: path, code: .unreadable, message: "\(path): no such file or directory"))
                continue
            }
            if !isDirectory.boolValue {
                if let error = notAudio(path) {
                    found.problems.append(Problem(file: path, code: error.code, message: error.description))
                } else {
                    found.files.append(path)
                }
                continue
            }
            var entries: [String] = []
            list(path, below: "", into: &entries, skipped: &found.skipped)
            for entry in entries.sorted() {
                let file = (path as NSString).appendingPathComponent(entry)
                var entryIsDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: file, isDirectory: &entryIsDirectory) else {
                    // Only a symbolic link is listed but not there: it leads nowhere or loops.
                    found.skipped.append(
                        Problem(file: file, code: .unreadable, message: "\(file): a symbolic link that leads nowhere or loops"))
                    continue
                }
                guard !entryIsDirectory.boolValue else { continue }
                if let error = notAudio(file) {
                    found.skipped.append(Problem(file: file, code: error.code, message: error.description))
                } else {
                    found.files.append(file)
                }
            }
        }
        return found
    }

    /// Adds to `entries` every name below `directory` (paths relative to it, `relative` the
    /// folder being listed), walking into folders but not into links to them. Names are read as
    /// the bytes they are: one that is not UTF-8 cannot be opened through a path and is skipped,
    /// named with its bytes escaped.
    private static func list(_ directory: String, below relative: String, into entries: inout [String], skipped: inout [Problem]) {
        let folder = relative.isEmpty ? directory : (directory as NSString).appendingPathComponent(relative)
        guard let stream = opendir(folder) else {
            skipped.append(Problem(
                file: folder, code: .unreadable, message: "\(folder): cannot list the folder (\(String(cString: strerror(errno))))"))
            return
        }
        defer { closedir(stream) }
        while let entry = readdir(stream) {
            let bytes = FileName.bytes(of: entry)
            guard bytes != [UInt8(ascii: ".")], bytes != [UInt8(ascii: "."), UInt8(ascii: ".")] else { continue }
            guard let name = FileName.decoded(bytes) else {
                let file = (folder as NSString).appendingPathComponent(FileName.shown(bytes))
                skipped.append(Problem(file: file, code: .unreadable, message: "\(file): \(FileName.notUTF8)"))
                continue
            }
            let path = relative.isEmpty ? name : relative + "/" + name
            entries.append(path)
            var status = stat()
            if lstat((directory as NSString).appendingPathComponent(path), &status) == 0, status.st_mode & S_IFMT == S_IFDIR {
                list(directory, below: path, into: &entries, skipped: &skipped)
            }
        }
    }

    /// Why `file` is not an audio file to send, or nil when it is one. A file that claims an
    /// audio format but is damaged counts as audio: whoever analyses it reports its problem.
    public static func notAudio(_ file: String) -> AudioError? {
        do throws(AudioError) {
            _ = try AudioStream(.file(file))
            return nil
        } catch {
            switch error {
            case .empty, .unsupportedFormat, .unreadable: return error
            default: return nil
            }
        }
    }
}
