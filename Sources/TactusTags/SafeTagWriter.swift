import Foundation
import TactusAudio
import TactusLibraryRoots
import TactusModel

/// Writes a BPM tag into a file people keep, so that nothing else of it changes and nothing
/// outside its folder is ever touched: the tag is written by TagLib into a copy made in the same
/// folder, the copy's decoded audio is checked against the original's (every sample, through
/// TactusAudio), and only then does the copy take the original's name, which is never absent or
/// half-written. With ``keepsBackup`` the original stays next to it as `NAME.bak`.
///
/// It works on descriptors only (an ``OpenFileInFolder``: the file opened once, without
/// following a link, and its folder): the copy is created in the folder with `openat`
/// (`O_EXCL`, never through a link), takes the original's permissions from `fstat` of its
/// descriptor, and TagLib and the decoder reach both files through their descriptors. Before
/// the copy is renamed over the name (`renameat`), the name must still refer to the file read;
/// when it was swapped meanwhile (for a link to a file elsewhere, say) the write is refused.
///
/// ```swift
/// let entry = try LibraryRoots.openEntry(atPath: "song.mp3")
/// let written = try SafeTagWriter(keepsBackup: true).write(bpm: 127.94, to: entry.descriptors)
/// // written.fields: TBPM = 128, TXXX:BPM = 127.9; written.backup: "song.mp3.bak"
/// ```
public struct SafeTagWriter: Sendable {
    /// Whether the original file is kept as `NAME.bak` (a write fails when that name exists).
    public var keepsBackup: Bool

    public init(keepsBackup: Bool = false) {
        self.keepsBackup = keepsBackup
    }

    /// What a write did.
    public struct Written: Sendable, Hashable {
        public var format: TagFormat
        public var fields: [TagField]
        /// Where the original file was kept, with ``SafeTagWriter/keepsBackup``, as messages name it.
        public var backup: String?
        /// The SHA-256 of the file now at the name.
        public var song: SongID
        /// Its size and modification time (nanoseconds since 1970).
        public var byteSize: Int
        public var mtimeNs: Int64
    }

    /// The checks a write makes before it touches anything (the file's format holds a BPM tag,
    /// the file is writable and decodes, the backup name is free), for a dry run; returns the
    /// fields a write of `bpm` would set.
    public func check(bpm: Double, for file: OpenFileInFolder) throws(TagError) -> [TagField] {
        TagField.bpm(bpm, in: try preflight(file).format)
    }

    /// The checks of ``check(bpm:for:)``; returns the file's format, its decoded audio and its status.
    private func preflight(_ file: OpenFileInFolder) throws(TagError) -> (format: TagFormat, audio: AudioDigest, status: stat) {
        var status = stat()
        guard fstat(file.file, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            throw .unreadable(path: file.path, reason: "not a regular file")
        }
        let format = try TagFile.format(of: file)
        guard format.holdsBPM else { throw .unsupportedFormat(path: file.path, format: format) }
        // The owner's write permission too: the superuser may write any file.
        guard access(TagLibFile(file).openPath, W_OK) == 0, status.st_mode & S_IWUSR != 0 else { throw .readOnly(path: file.path) }
        if keepsBackup {
            var existing = stat()
            if fstatat(file.folder, backupName(file), &existing, AT_SYMLINK_NOFOLLOW) == 0 {
                throw .writeFailed(path: file.path, reason: "the backup \(backupPath(file)) already exists")
            }
        }
        return (format, try AudioDigest(.descriptor(file.file, name: file.path)), status)
    }

    /// Writes `bpm` (in 1...1000) into the file as described above.
    public func write(bpm: Double, to file: OpenFileInFolder) throws(TagError) -> Written {
        let (format, original, status) = try preflight(file)
        let copy = try FolderCopy(of: file)
        let fields: [TagField]
        do {
            fields = try TagFile.writeBPM(bpm, to: TagLibFile(descriptor: copy.descriptor, name: file.name, path: file.path))
        } catch {
            throw .writeFailed(path: file.path, reason: "in its temporary copy, \(error.description.dropFirst(file.path.count + 2))")
        }
        let written: AudioDigest
        do {
            written = try AudioDigest(.descriptor(copy.descriptor, name: file.path))
        } catch {
            throw .audioChanged(path: file.path, reason: "the written copy does not decode")
        }
        if let difference = original.difference(from: written) {
            throw .audioChanged(path: file.path, reason: difference)
        }
        let final = try copy.finish(like: status)
        var backup: String?
        if keepsBackup {
            // A hard link to the file read (through its descriptor, never its name), so the
            // backup is the original even when the name was swapped meanwhile.
            guard linkat(AT_FDCWD, TagLibFile(file).openPath, file.folder, backupName(file), AT_SYMLINK_FOLLOW) == 0 else {
                throw .writeFailed(path: file.path, reason: "cannot keep the backup \(backupPath(file)): \(String(cString: strerror(errno)))")
            }
            backup = backupPath(file)
        }
        do {
            try copy.replace(file, read: status)
        } catch {
            if keepsBackup { unlinkat(file.folder, backupName(file), 0) }
            throw error
        }
        return Written(format: format, fields: fields, backup: backup, song: final.song, byteSize: final.byteSize, mtimeNs: final.mtimeNs)
    }

    private func backupName(_ file: OpenFileInFolder) -> String { file.name + ".bak" }

    private func backupPath(_ file: OpenFileInFolder) -> String { file.path + ".bak" }
}

/// A copy of a file made in its folder under a hidden name (`openat` with `O_CREAT | O_EXCL`,
/// mode 0600 until it is finished), open for reading and writing, until it takes the file's
/// name; a copy that did not is removed with this value (when its name is still its own).
final class FolderCopy {
    let descriptor: Int32
    private let folder: Int32
    private let name: String
    /// How messages name the original.
    private let path: String
    private var renamed = false

    /// Copies `file` into a new file of its folder, with the same extension (for people who see
    /// one left by a crash: TagLib is told the format by the original's name).
    init(of file: OpenFileInFolder) throws(TagError) {
        let url = URL(fileURLWithPath: file.name)
        let stem = url.deletingPathExtension().lastPathComponent
        name = ".\(stem).tactus-\(UUID().uuidString.prefix(8))" + (url.pathExtension.isEmpty ? "" : "." + url.pathExtension)
        folder = file.folder
        path = file.path
        descriptor = openat(folder, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw .unreadable(path: file.path, reason: "cannot make a temporary copy in its folder: \(String(cString: strerror(errno)))")
        }
        do {
            try Self.copy(from: file.file, to: descriptor)
        } catch {
            throw .unreadable(path: file.path, reason: "cannot make a temporary copy in its folder: \(error)")
        }
    }

    /// Closes the copy and removes its name, when the copy did not take the file's and its name
    /// is still its own.
    deinit {
        guard descriptor >= 0 else { return }
        var mine = stat(), named = stat()
        if !renamed, fstat(descriptor, &mine) == 0, fstatat(folder, name, &named, AT_SYMLINK_NOFOLLOW) == 0,
            mine.st_dev == named.st_dev, mine.st_ino == named.st_ino
        {
            unlinkat(folder, name, 0)
        }
        close(descriptor)
    }

    /// Gives the copy the original's permission bits (its owner and group too when this process
    /// may), makes it durable, and returns the SHA-256, size and modification time it now has.
    func finish(like original: stat) throws(TagError) -> (song: SongID, byteSize: Int, mtimeNs: Int64) {
        if geteuid() == 0 { fchown(descriptor, original.st_uid, original.st_gid) }
        var status = stat()
        guard fchmod(descriptor, original.st_mode & 0o777) == 0, fsync(descriptor) == 0, fstat(descriptor, &status) == 0 else {
            throw .writeFailed(path: path, reason: "cannot finish the temporary copy: \(String(cString: strerror(errno)))")
        }
        let song: SongID
        do {
            song = try SongID(of: .descriptor(descriptor, name: name))
        } catch {
            throw .writeFailed(path: path, reason: "cannot read the temporary copy back: \(error)")
        }
        return (song, Int(status.st_size), Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec))
    }

    /// Renames the copy over `file`'s name, when that name still refers to the file read
    /// (`original`, its `fstat`): else ``TagError/changedWhileWritten(path:)``.
    func replace(_ file: OpenFileInFolder, read original: stat) throws(TagError) {
        var named = stat()
        guard fstatat(folder, file.name, &named, AT_SYMLINK_NOFOLLOW) == 0, named.st_dev == original.st_dev,
            named.st_ino == original.st_ino
        else { throw .changedWhileWritten(path: file.path) }
        guard renameat(folder, name, folder, file.name) == 0 else {
            throw .writeFailed(path: file.path, reason: "cannot replace the file: \(String(cString: strerror(errno)))")
        }
        renamed = true
    }

    /// Every byte of `source` from its start, written to `target`.
    private static func copy(from source: Int32, to target: Int32) throws(CopyError) {
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var offset: off_t = 0
        while true {
            let count = buffer.withUnsafeMutableBytes { pread(source, $0.baseAddress!, $0.count, offset) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw CopyError(errno: errno) }
            guard count > 0 else { return }
            var written = 0
            while written < count {
                let done = buffer.withUnsafeBytes { write(target, $0.baseAddress! + written, count - written) }
                if done < 0, errno == EINTR { continue }
                guard done > 0 else { throw CopyError(errno: errno) }
                written += done
            }
            offset += off_t(count)
        }
    }

    /// A read or write of the copy failed.
    struct CopyError: Error, CustomStringConvertible {
        var errno: Int32
        var description: String { String(cString: strerror(errno)) }
    }
}

/// A song's decoded audio, summarised: its format, its length and a SHA-256 of every sample
/// (streamed, so a long song is never held whole).
struct AudioDigest: Equatable {
    var sampleRate: Int
    var channels: Int
    var frames: Int
    var samples: SongID

    init(_ source: AudioSource) throws(TagError) {
        do {
            let stream = try AudioStream(source, options: DecodingOptions(minimumSeconds: 0))
            var hasher = SongID.Hasher()
            while try stream.readBlock({ hasher.update(UnsafeRawBufferPointer($0)) }) {}
            sampleRate = stream.metadata.sampleRate
            channels = stream.metadata.channels
            frames = stream.framesDecoded
            samples = hasher.finalize()
        } catch {
            throw .notAudio(path: source.name, reason: error.description)
        }
    }

    /// Why `other` is not the same audio, or nil when it is.
    func difference(from other: AudioDigest) -> String? {
        if sampleRate != other.sampleRate || channels != other.channels {
            return "\(sampleRate) Hz, \(channels) channels before; \(other.sampleRate) Hz, \(other.channels) channels after"
        }
        if frames != other.frames { return "\(frames) frames decoded before, \(other.frames) after" }
        return samples == other.samples ? nil : "the decoded samples differ"
    }
}
