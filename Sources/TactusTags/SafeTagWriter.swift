import Foundation
import TactusAudio
import TactusModel

/// Writes a BPM tag into a file people keep, so that nothing else of it changes: the tag is
/// written by TagLib into a temporary copy in the same folder, the copy's decoded audio is
/// checked against the original's (every sample of its mono mix, through TactusAudio), and only then is the
/// copy renamed over the original, which is never absent or half-written. With
/// ``keepsBackup`` the original stays next to it as `FILE.bak`.
///
/// ```swift
/// let written = try SafeTagWriter(keepsBackup: true).write(bpm: 127.94, to: "song.mp3")
/// // written.fields: TBPM = 128, TXXX:BPM = 127.9; written.backup: "song.mp3.bak"
/// ```
public struct SafeTagWriter: Sendable {
    /// Whether the original file is kept as `FILE.bak` (a write fails when that file exists).
    public var keepsBackup: Bool

    public init(keepsBackup: Bool = false) {
        self.keepsBackup = keepsBackup
    }

    /// What a write did.
    public struct Written: Sendable, Hashable {
        public var format: TagFormat
        public var fields: [TagField]
        /// Where the original file was kept, with ``SafeTagWriter/keepsBackup``.
        public var backup: String?
    }

    /// The checks a write makes before it touches anything (the file's format holds a BPM tag,
    /// the file is writable and decodes, the backup name is free), for a dry run; returns the
    /// fields a write of `bpm` would set.
    public func check(bpm: Double, for path: String) throws(TagError) -> [TagField] {
        TagField.bpm(bpm, in: try preflight(path).format)
    }

    /// The checks of ``check(bpm:for:)``; returns the file's format and decoded audio.
    private func preflight(_ path: String) throws(TagError) -> (format: TagFormat, audio: AudioDigest) {
        let format = try TagFile.format(of: path)
        guard format.holdsBPM else { throw .unsupportedFormat(path: path, format: format) }
        guard TagFile.isWritable(path) else { throw .readOnly(path: path) }
        if keepsBackup, FileManager.default.fileExists(atPath: backupPath(path)) {
            throw .writeFailed(path: path, reason: "the backup \(backupPath(path)) already exists")
        }
        return (format, try AudioDigest(path))
    }

    /// Writes `bpm` (in 1...1000) into the file at `path` as described above.
    public func write(bpm: Double, to path: String) throws(TagError) -> Written {
        let (format, original) = try preflight(path)
        let temporary = temporaryPath(path)
        do {
            try FileManager.default.copyItem(atPath: path, toPath: temporary)
            let permissions = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions]
            try FileManager.default.setAttributes([.posixPermissions: permissions as Any], ofItemAtPath: temporary)
        } catch {
            try? FileManager.default.removeItem(atPath: temporary)
            throw .unreadable(path: path, reason: "cannot make a temporary copy in its folder: \(error.localizedDescription)")
        }
        defer { try? FileManager.default.removeItem(atPath: temporary) }
        let fields: [TagField]
        do {
            fields = try TagFile.writeBPM(bpm, to: temporary)
        } catch {
            // The error names the temporary copy, which is about to be removed.
            throw .writeFailed(path: path, reason: "in its temporary copy, " + error.description.dropFirst(temporary.count + 2))
        }
        let written: AudioDigest
        do {
            written = try AudioDigest(temporary)
        } catch {
            throw .audioChanged(path: path, reason: "the written copy does not decode")
        }
        if let difference = original.difference(from: written) {
            throw .audioChanged(path: path, reason: difference)
        }
        var backup: String?
        if keepsBackup {
            // A hard link: the original's path keeps its file until the rename replaces it.
            guard link(path, backupPath(path)) == 0 else {
                throw .writeFailed(path: path, reason: "cannot keep the backup \(backupPath(path)): \(String(cString: strerror(errno)))")
            }
            backup = backupPath(path)
        }
        guard rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            if let backup { unlink(backup) }
            throw .writeFailed(path: path, reason: "cannot replace the file: \(reason)")
        }
        return Written(format: format, fields: fields, backup: backup)
    }

    private func backupPath(_ path: String) -> String { path + ".bak" }

    /// A hidden file in the same folder (a rename never crosses file systems), with the same
    /// extension: TagLib 1.13 recognises formats by extension.
    private func temporaryPath(_ path: String) -> String {
        let url = URL(fileURLWithPath: path)
        let name = ".\(url.deletingPathExtension().lastPathComponent).tactus-\(UUID().uuidString.prefix(8))"
        return url.deletingLastPathComponent().appendingPathComponent(name).appendingPathExtension(url.pathExtension).path
    }
}

/// A song's decoded audio, summarised: its format, its length and a SHA-256 of every sample
/// (streamed, so a long song is never held whole).
struct AudioDigest: Equatable {
    var sampleRate: Int
    var channels: Int
    var frames: Int
    var samples: SongID

    init(_ path: String) throws(TagError) {
        do {
            let stream = try AudioStream(.file(path), options: DecodingOptions(minimumSeconds: 0))
            var hasher = SongID.Hasher()
            while try stream.readBlock({ hasher.update(UnsafeRawBufferPointer($0)) }) {}
            sampleRate = stream.metadata.sampleRate
            channels = stream.metadata.channels
            frames = stream.framesDecoded
            samples = hasher.finalize()
        } catch {
            throw .notAudio(path: path, reason: error.description)
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
