import Foundation
import TactusAudio
import TactusModel
import TactusStore

/// BPM tags between a library and its songs' files: a file's tag read into its song's reference
/// tempo (source `tag`), or the library's tempo written into the file's tag (``SafeTagWriter``).
/// What `tactus tags --db` and a server's `tags` request both do, file by file, each file's
/// outcome a ``TagReport`` (a failure is a report, never a thrown error).
///
/// ```swift
/// let tags = LibraryTags(library: library)
/// let report = tags.write(file: "/music/a.flac", options: .init(minConfidence: 0.4))
/// ```
public struct LibraryTags: Sendable {
    /// Whose tempo a write takes.
    public enum Tempo: Sendable, Hashable {
        /// The consensus of the detectors.
        case consensus
        /// The newest analysis by this detector.
        case detector(String)

        /// `consensus` or the detector's name, as reports name it.
        public var name: String {
            switch self {
            case .consensus: "consensus"
            case .detector(let name): name
            }
        }
    }

    /// How `write` chooses and writes.
    public struct WriteOptions: Sendable, Hashable {
        public var tempo: Tempo
        /// Songs whose tempo has a lower confidence are skipped (0: none is).
        public var minConfidence: Double
        /// Check the file and report what would be written, without writing.
        public var dryRun: Bool
        /// Keep the original as `FILE.bak`.
        public var backup: Bool

        public init(tempo: Tempo = .consensus, minConfidence: Double = 0, dryRun: Bool = false, backup: Bool = false) {
            self.tempo = tempo
            self.minConfidence = minConfidence
            self.dryRun = dryRun
            self.backup = backup
        }
    }

    public let library: Library

    public init(library: Library) {
        self.library = library
    }

    /// Reads the BPM tag of `file` into its song's reference tempo. `expected`, when given, is
    /// the song the library says the file holds: a file whose content changed since is skipped.
    /// A reference set by hand or from a CSV file is kept unless `replace`.
    public func read(file: String, expected: SongID? = nil, replace: Bool) -> TagReport {
        do {
            let tags = try TagFile.read(file)
            let song = try Self.song(of: file)
            var report = TagReport(file: file, song: song, outcome: .skipped)
            report.tag = tags.bpmText
            if let changed = Self.changed(expected, song) { return report.because(changed) }
            guard try library.song(song) != nil else {
                return report.because("not in the library (analyse it first)")
            }
            guard let text = tags.bpmText else { return report.because("no BPM tag") }
            guard let bpm = tags.bpm else { return report.because("the BPM tag '\(text)' is not a tempo in 1...1000") }
            if !replace, let existing = try library.reference(for: song), existing.source != "tag" {
                return report.because("has a reference tempo from \(existing.source) (replace overrides it)")
            }
            try library.setReference(bpm, for: song, source: "tag")
            report.outcome = .imported
            report.bpm = bpm
            return report
        } catch {
            return Self.failure(file: file, song: expected, error)
        }
    }

    /// Writes the library's tempo of the song `file` holds into its BPM tag, checked (see
    /// ``SafeTagWriter``); the library's song then takes the new bytes' SHA-256. `expected` as
    /// for ``read(file:expected:replace:)``.
    public func write(file: String, expected: SongID? = nil, options: WriteOptions) -> TagReport {
        do {
            return try writing(file: file, expected: expected, options: options)
        } catch {
            return Self.failure(file: file, song: expected, error)
        }
    }

    private func writing(file: String, expected: SongID?, options: WriteOptions) throws -> TagReport {
        let format = try TagFile.format(of: file)
        let song = try Self.song(of: file)
        var report = TagReport(file: file, song: song, outcome: .skipped)
        report.from = options.tempo.name
        if let changed = Self.changed(expected, song) { return report.because(changed) }
        guard format.holdsBPM else {
            let kind = URL(fileURLWithPath: file).pathExtension.lowercased()
            return report.because("unsupported format for BPM tags (\(kind.isEmpty ? format.rawValue : kind))")
        }
        guard try library.song(song) != nil else { return report.because("not in the library (no analysis)") }
        let tempo: (bpm: Double?, confidence: Double?)
        switch options.tempo {
        case .detector(let detector):
            let newest = try library.analyses(of: song).filter { $0.record.analysis.detector == detector }
                .max { $0.record.analyzedAt < $1.record.analyzedAt }
            guard let newest else { return report.because("no analysis by \(detector)") }
            tempo = (newest.record.analysis.bpm, newest.record.analysis.confidence)
        case .consensus:
            guard let found = try library.consensus(of: song) else { return report.because("no analysis") }
            tempo = (found.bpm, found.confidence)
        }
        report.confidence = tempo.confidence
        guard let bpm = tempo.bpm else { return report.because("no tempo found by \(options.tempo.name)") }
        report.bpm = bpm
        if options.minConfidence > 0 {
            guard let confidence = tempo.confidence else { return report.because("no confidence recorded") }
            guard confidence >= options.minConfidence else {
                return report.because(String(format: "confidence %.2f below the minimum %g", confidence, options.minConfidence))
            }
        }
        let writer = SafeTagWriter(keepsBackup: options.backup)
        if options.dryRun {
            report.fields = try writer.check(bpm: bpm, for: file)
            report.outcome = .wouldWrite
            return report
        }
        let written = try writer.write(bpm: bpm, to: file)
        report.outcome = .written
        report.fields = written.fields
        report.backup = written.backup
        let rewritten = try Self.song(of: file)
        do {
            try library.songRewritten(song, as: rewritten, byteSize: try Self.size(of: file))
            report.newSong = rewritten
            try recordRewritten(file, of: rewritten)
        } catch {
            report.reason = "written, but the library still names the old bytes: \(error)"
        }
        return report
    }

    /// The stored locations of `song` that are `file` take its size and modification time as
    /// they are now, so a scan does not take the rewritten file for a changed one.
    private func recordRewritten(_ file: String, of song: SongID) throws {
        let path = URL(fileURLWithPath: file).standardizedFileURL.path
        var status = stat()
        guard stat(file, &status) == 0 else { return }
        for var location in try library.locations(of: song) where URL(fileURLWithPath: location.absolutePath).standardizedFileURL.path == path {
            location.byteSize = Int(status.st_size)
            location.mtimeNs = Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec)
            try library.recordLocation(location, of: song)
        }
    }

    /// Why a file whose content is `found` is not the song `expected`, or nil.
    private static func changed(_ expected: SongID?, _ found: SongID) -> String? {
        guard let expected, expected != found else { return nil }
        return "the file's content changed since it was analysed (it is no longer song \(expected.short)): scan or analyse it again"
    }

    /// The SHA-256 of the file's bytes: the song's identity in the library.
    static func song(of file: String) throws(AudioError) -> SongID {
        try SongID(of: .file(file))
    }

    static func size(of file: String) throws -> Int {
        guard let size = (try FileManager.default.attributesOfItem(atPath: file)[.size] as? NSNumber)?.intValue else {
            throw TagError.unreadable(path: file, reason: "the file system reports no size")
        }
        return size
    }

    /// A failure's report: the error's message names the file.
    static func failure(file: String, song: SongID?, _ error: any Error) -> TagReport {
        var report = TagReport(file: file, song: song, outcome: .failed)
        switch error {
        case let error as TagError:
            (report.reason, report.code) = (error.description, error.code)
        case let error as AudioError:
            (report.reason, report.code) = (error.description, error.code)
        case let error as StoreError:
            (report.reason, report.code) = ("\(file): \(error.description)", "library")
        default:
            (report.reason, report.code) = ("\(file): \(error)", "internal")
        }
        return report
    }
}
