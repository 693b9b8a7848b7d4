import Foundation
import TactusAudio
import TactusLibraryRoots
import TactusLibraryService
import TactusModel

/// The file part of BPM tags run in this process, on descriptors only: ``TagFile`` reads the
/// tag, ``SafeTagWriter`` writes it. `tactus tags --db` uses it directly; `tactus serve`'s
/// service hosts run it for the coordinator.
public struct LocalSongTagger: SongTagger {
    public init() {}

    public func readTag(of file: OpenFileInFolder) throws(TagFileProblem) -> TagFileRead {
        do {
            let tags = try TagFile.read(file)
            return TagFileRead(song: try Self.song(of: file), tag: tags.bpmText)
        } catch {
            throw Self.problem(error)
        }
    }

    public func writeTag(_ order: TagWriteOrder, into file: OpenFileInFolder) throws(TagFileProblem) -> TagFileWritten {
        do {
            let format = try TagFile.format(of: file)
            guard format.holdsBPM else {
                let kind = URL(fileURLWithPath: file.name).pathExtension.lowercased()
                throw TagFileProblem.skip("unsupported format for BPM tags (\(kind.isEmpty ? format.rawValue : kind))")
            }
            guard try Self.song(of: file) == order.song else { throw TagFileProblem.contentChanged(from: order.song) }
            let writer = SafeTagWriter(keepsBackup: order.backup)
            if order.dryRun { return TagFileWritten(fields: try writer.check(bpm: order.bpm, for: file)) }
            let written = try writer.write(bpm: order.bpm, to: file)
            return TagFileWritten(
                fields: written.fields, backup: written.backup,
                rewritten: RewrittenFile(song: written.song, byteSize: written.byteSize, mtimeNs: written.mtimeNs))
        } catch {
            throw Self.problem(error)
        }
    }

    /// The SHA-256 of the file's bytes, read through its descriptor.
    private static func song(of file: OpenFileInFolder) throws(AudioError) -> SongID {
        try SongID(of: .descriptor(file.file, name: file.path))
    }

    /// `error` as a failed file's problem (a problem itself as it is).
    private static func problem(_ error: any Error) -> TagFileProblem {
        switch error {
        case let problem as TagFileProblem: problem
        case let error as TagError: TagFileProblem(skipped: false, reason: error.description, code: error.code)
        case let error as AudioError: TagFileProblem(skipped: false, reason: error.description, code: error.code)
        default: TagFileProblem(skipped: false, reason: "\(error)", code: .internal)
        }
    }
}
