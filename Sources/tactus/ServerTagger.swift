import TactusCoordinator
import TactusModel
import TactusStore
import TactusTags

/// The ``SongTagger`` `tactus serve` gives its coordinator: ``LibraryTags`` (TagLib) on the
/// coordinator's own library.
struct ServerTagger: SongTagger {
    func read(file: String, song: SongID, replace: Bool, library: Library) -> TagReport {
        LibraryTags(library: library).read(file: file, expected: song, replace: replace)
    }

    func write(file: String, song: SongID, options: TagWriteOptions, library: Library) -> TagReport {
        LibraryTags(library: library).write(
            file: file, expected: song,
            options: LibraryTags.WriteOptions(
                tempo: options.detector.map { .detector($0) } ?? .consensus, minConfidence: options.minConfidence,
                dryRun: options.dryRun, backup: options.backup))
    }
}
