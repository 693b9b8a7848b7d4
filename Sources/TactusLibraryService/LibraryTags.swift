import Foundation
import TactusLibraryRoots
import TactusModel
import TactusProtocol
import TactusStore

/// BPM tags between a library and its songs' files, the library part: a file's tag read into
/// its song's reference tempo (source `tag`), or the library's tempo chosen, written into the
/// file by the ``SongTagger`` (the file part) and the song then renamed to its new bytes. What
/// `tactus tags --db` and a server's `tags` request both do, file by file, each file's outcome
/// a ``TagReport`` (a failure is a report, never a thrown error).
///
/// ```swift
/// let tags = LibraryTags(library: library, tagger: tagger)
/// let report = tags.write(try roots.openEntry("/music/a.flac"), expected: nil, options: TagWriteOptions(minConfidence: 0.4))
/// ```
public struct LibraryTags: Sendable {
    public let library: Library
    public let tagger: any SongTagger
    /// Told of the song's other present files after a file of it was rewritten (they keep the
    /// old bytes and are to be scanned again): a server scans them at once.
    public let otherCopiesKeptOldBytes: @Sendable ([SongLocation]) -> Void

    public init(library: Library, tagger: any SongTagger, otherCopiesKeptOldBytes: @escaping @Sendable ([SongLocation]) -> Void = { _ in }) {
        self.library = library
        self.tagger = tagger
        self.otherCopiesKeptOldBytes = otherCopiesKeptOldBytes
    }

    /// Reads the BPM tag of `entry` into its song's reference tempo. `expected`, when given, is
    /// the song the library says the file holds: a file whose content changed since is skipped.
    /// A reference set by hand or from a CSV file is kept unless `replace`.
    public func read(_ entry: LibraryEntry, expected: SongID?, replace: Bool) -> TagReport {
        let file = entry.file.path
        do {
            let found: TagFileRead
            do throws(TagFileProblem) {
                found = try tagger.readTag(of: entry.descriptors)
            } catch {
                return error.report(file: file, song: expected)
            }
            var report = TagReport(file: file, song: found.song, outcome: .skipped)
            report.tag = found.tag
            if let changed = Self.changed(expected, found.song) { return report.because(changed) }
            guard try library.song(found.song) != nil else {
                return report.because("not in the library (analyse it first)")
            }
            guard let text = found.tag else { return report.because("no BPM tag") }
            guard let bpm = TagField.tempo(of: text) else { return report.because("the BPM tag '\(text)' is not a tempo in 1...1000") }
            if !replace, let existing = try library.reference(for: found.song), existing.source != "tag" {
                return report.because("has a reference tempo from \(existing.source) (replace overrides it)")
            }
            try library.setReference(bpm, for: found.song, source: "tag")
            report.outcome = .imported
            report.bpm = bpm
            return report
        } catch {
            return Self.failure(file: file, song: expected, error)
        }
    }

    /// Writes the library's tempo of the song `entry` holds into its BPM tag (through the
    /// tagger, checked); the library's song then takes the new bytes' SHA-256, and its
    /// location the file's new size and modification time. `expected` as for
    /// ``read(_:expected:replace:)``; nil: the file's bytes are hashed here.
    public func write(_ entry: LibraryEntry, expected: SongID?, options: TagWriteOptions) -> TagReport {
        do {
            return try writing(entry, song: try expected ?? entry.file.songID(), options: options)
        } catch {
            return Self.failure(file: entry.file.path, song: expected, error)
        }
    }

    private func writing(_ entry: LibraryEntry, song: SongID, options: TagWriteOptions) throws -> TagReport {
        var report = TagReport(file: entry.file.path, song: song, outcome: .skipped)
        report.from = options.from
        guard try library.song(song) != nil else { return report.because("not in the library (no analysis)") }
        let tempo: (bpm: Double?, confidence: Double?)
        if let detector = options.detector {
            let newest = try library.analyses(of: song).filter { $0.record.analysis.detector == detector }
                .max { $0.record.analyzedAt < $1.record.analyzedAt }
            guard let newest else { return report.because("no analysis by \(detector)") }
            tempo = (newest.record.analysis.bpm, newest.record.analysis.confidence)
        } else {
            guard let found = try library.consensus(of: song) else { return report.because("no analysis") }
            tempo = (found.bpm, found.confidence)
        }
        report.confidence = tempo.confidence
        guard let bpm = tempo.bpm else { return report.because("no tempo found by \(options.from)") }
        report.bpm = bpm
        if options.minConfidence > 0 {
            guard let confidence = tempo.confidence else { return report.because("no confidence recorded") }
            guard confidence >= options.minConfidence else {
                return report.because(String(format: "confidence %.2f below the minimum %g", confidence, options.minConfidence))
            }
        }
        let written: TagFileWritten
        do throws(TagFileProblem) {
            written = try tagger.writeTag(
                TagWriteOrder(bpm: bpm, song: song, dryRun: options.dryRun, backup: options.backup), into: entry.descriptors)
        } catch {
            (report.outcome, report.reason, report.code) = (error.skipped ? .skipped : .failed, error.reason, error.code)
            return report
        }
        report.fields = written.fields
        guard let rewritten = written.rewritten else {
            report.outcome = .wouldWrite
            return report
        }
        report.outcome = .written
        report.backup = written.backup
        do {
            // Other copies of the song keep the old bytes: the next scan hashes them again (and
            // finds them as the old bytes, a song of their own), rather than trusting their
            // size and time to hold the new ones.
            try library.songRewritten(song, as: rewritten.song, byteSize: rewritten.byteSize)
        } catch {
            report.reason = "written, but the library still names the old bytes: \(error)"
            return report
        }
        report.newSong = rewritten.song
        do {
            try recordRewritten(entry.file.location, as: rewritten)
            let copies = try otherCopies(of: rewritten.song, than: entry.file.location)
            if !copies.isEmpty {
                report.reason = "its other copies keep the old bytes and are read again by the next scan: "
                    + copies.map(\.absolutePath).joined(separator: ", ")
                otherCopiesKeptOldBytes(copies)
            }
        } catch {
            report.reason = "written, and the library names the new bytes; the next scan reads the song's files again: \(error)"
        }
        return report
    }

    /// The stored locations of the rewritten song that are the file written take its size and
    /// modification time as they are now, so a scan does not take it for a changed one.
    private func recordRewritten(_ file: SongLocation, as rewritten: RewrittenFile) throws {
        let path = URL(fileURLWithPath: file.absolutePath).standardizedFileURL.path
        for var location in try library.locations(of: rewritten.song)
        where URL(fileURLWithPath: location.absolutePath).standardizedFileURL.path == path {
            location.byteSize = rewritten.byteSize
            location.mtimeNs = rewritten.mtimeNs
            // Written now: the next scan records its change time.
            location.ctimeNs = nil
            try library.recordLocation(location, of: rewritten.song)
        }
    }

    /// The present files of `song` other than `file`.
    private func otherCopies(of song: SongID, than file: SongLocation) throws -> [SongLocation] {
        let path = URL(fileURLWithPath: file.absolutePath).standardizedFileURL.path
        return try library.locations(of: song).filter {
            !$0.missing && URL(fileURLWithPath: $0.absolutePath).standardizedFileURL.path != path
        }
    }

    /// Why a file whose content is `found` is not the song `expected`, or nil.
    private static func changed(_ expected: SongID?, _ found: SongID) -> String? {
        guard let expected, expected != found else { return nil }
        return TagFileProblem.contentChanged(from: expected).reason
    }

    /// A failure's report: the error's message names the file.
    static func failure(file: String, song: SongID?, _ error: any Error) -> TagReport {
        var report = TagReport(file: file, song: song, outcome: .failed)
        switch error {
        case let error as ErrorBody:
            (report.reason, report.code) = (error.message, error.code)
        case let error as any CodedError:
            (report.reason, report.code) = (error.description, error.code)
        case let error as StoreError:
            (report.reason, report.code) = ("\(file): \(error.description)", .library)
        default:
            (report.reason, report.code) = ("\(file): \(error)", .internal)
        }
        return report
    }
}

/// How a tags write chooses and writes.
public struct TagWriteOptions: Sendable, Hashable {
    /// The detector whose newest tempo is written; nil: the consensus of the detectors.
    public var detector: String?
    /// Songs whose tempo has a lower confidence are skipped (0: none is).
    public var minConfidence: Double
    /// Check the file and report what would be written, without writing.
    public var dryRun: Bool
    /// Keep the original as `FILE.bak`.
    public var backup: Bool

    public init(detector: String? = nil, minConfidence: Double = 0, dryRun: Bool = false, backup: Bool = false) {
        self.detector = detector
        self.minConfidence = minConfidence
        self.dryRun = dryRun
        self.backup = backup
    }

    /// `consensus` or the detector's name, as reports name the tempo's source.
    public var from: String { detector ?? "consensus" }
}

extension ErrorCode {
    /// A tag report's failure because the library refused to record what was read or written.
    static let library = ErrorCode(rawValue: "library")
}
