import ArgumentParser
import Foundation
import TactusAudio
import TactusModel
import TactusStore
import TactusTags

extension Tactus {
    /// `tactus tags`: BPM tags in the files themselves, read into the library or written from it.
    struct Tags: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "tags",
            abstract: "Read BPM tags into the library as reference tempi, or write the library's tempi into files' tags.",
            discussion: """
                Both need --db (the library file) and the files themselves: the library keeps \
                only file names, so songs are found by hashing the files given (as `analyze` \
                does); a folder stands for every audio file under it. Tags are read and written \
                through TagLib.

                Examples:
                  tactus tags read ~/Music --db lib.sqlite
                  tactus tags write --min-confidence 0.5 --dry-run ~/Music/*.flac --db lib.sqlite
                """,
            subcommands: [Read.self, Write.self])

        /// The files named, each folder replaced by the audio files under it (in name order).
        static func files(_ paths: [String]) -> [String] {
            Tactus.Analyze.expanding(paths).files
        }
    }
}

extension Tactus.Tags {
    /// `tactus tags read FILE... --db PATH`
    struct Read: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Import the files' BPM tags as reference tempi (source `tag`).",
            discussion: """
                Each file's BPM tag (MP3: TXXX:BPM when present, else TBPM; FLAC, Ogg Vorbis and \
                Opus: the BPM comment; MP4: tmpo) becomes the reference tempo of its song, so \
                `tactus compare` shows how the tags agree with each detector and lists the songs \
                to check. A song keeps a reference set by hand or from a CSV file unless \
                --replace is given. Files without a tag, with a tag that is not a tempo in \
                1...1000, or not in the library are skipped, with the reason.

                With --json, one object per file: file, song, outcome (imported, skipped or \
                failed), tag (the text), bpm, reason, code. Exit status 1 when any file failed.

                Example: tactus tags read ~/Music/*.mp3 --db lib.sqlite
                """)

        @Argument(help: ArgumentHelp("The audio files whose tags to read (folders: every audio file under them).", valueName: "file"))
        var files: [String]

        @Flag(help: "Replace reference tempi set by hand or from a CSV file.")
        var replace = false

        @OptionGroup var library: LibraryOptions
        @OptionGroup var output: OutputOptions

        func validate() throws {
            guard !files.isEmpty else { throw ValidationError("Give at least one file whose tags to read.") }
            guard library.path != nil else { throw ValidationError("tags read needs --db PATH (the library file)") }
        }

        func run() throws {
            guard let path = library.path else { return }
            let store = try LibraryOptions.open(path, .existing)
            let reports = Tactus.Tags.files(files).map { file in
                do {
                    return try importTag(of: file, into: store)
                } catch {
                    return TagReport(file: file, failure: error)
                }
            }
            try TagReport.print(reports, json: output.json, counted: ["imported", "skipped", "failed"])
        }

        private func importTag(of file: String, into store: Library) throws -> TagReport {
            let tags = try TagFile.read(file)
            let song = try TagReport.song(of: file)
            var report = TagReport(file: file, song: song.hex, outcome: "skipped")
            report.tag = tags.bpmText
            guard try store.song(song) != nil else {
                return report.because("not in the library (analyse it with tactus analyze --db first)")
            }
            guard let text = tags.bpmText else { return report.because("no BPM tag") }
            guard let bpm = tags.bpm else { return report.because("the BPM tag '\(text)' is not a tempo in 1...1000") }
            if !replace, let existing = try store.reference(for: song), existing.source != "tag" {
                return report.because("has a reference tempo from \(existing.source) (--replace overrides it)")
            }
            try store.setReference(bpm, for: song, source: "tag")
            report.outcome = "imported"
            report.bpm = bpm
            return report
        }
    }

    /// `tactus tags write [--consensus | --detector NAME] FILE... --db PATH`
    struct Write: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write the library's tempo of each file into its BPM tag.",
            discussion: """
                The tempo is the consensus of the detectors (--consensus, the default) or the \
                newest analysis by one detector (--detector NAME). MP3: ID3v2 TBPM (an integer, \
                as the ID3 specification requires) and TXXX:BPM (one decimal); FLAC, Ogg Vorbis \
                and Opus: the BPM Vorbis comment (one decimal); MP4: the tmpo atom (an integer). \
                Other formats (WAV, AIFF) are skipped.

                Every other tag and every audio byte stays as it was: the tag is written into a \
                temporary copy in the file's folder, the copy's decoded audio is checked sample \
                by sample against the original's, and the copy then replaces the file (--backup \
                keeps the original as FILE.bak). The new bytes have a new SHA-256: the library's \
                song takes it, keeping its analyses and reference tempo.

                Each file is reported as written (would-write with --dry-run), skipped (not in \
                the library, no analysis, no tempo, below --min-confidence, unsupported format) \
                or failed (missing, read-only, not audio...), with the reason. With --json, one \
                object per file: file, song, outcome, bpm, confidence, from, fields [{name, \
                value}], backup, new_song, reason, code. Exit status 1 when any file failed.

                Example: tactus tags write --detector comb-filter --min-confidence 0.4 song.mp3 --db lib.sqlite
                """)

        @Argument(help: ArgumentHelp("The audio files to tag (folders: every audio file under them).", valueName: "file"))
        var files: [String]

        @Flag(help: "Write the consensus of the detectors (the default).")
        var consensus = false

        @Option(help: ArgumentHelp("Write the newest tempo of this detector instead of the consensus.", valueName: "name"))
        var detector: String?

        @Option(help: ArgumentHelp("Skip songs whose tempo has a lower confidence (0...1).", valueName: "x"))
        var minConfidence: Double = 0

        @Flag(help: "Report what would be written, and check the files, without writing.")
        var dryRun = false

        @Flag(help: "Keep each original file as FILE.bak.")
        var backup = false

        @OptionGroup var library: LibraryOptions
        @OptionGroup var output: OutputOptions

        func validate() throws {
            guard !files.isEmpty else { throw ValidationError("Give at least one file to tag.") }
            guard library.path != nil else { throw ValidationError("tags write needs --db PATH (the library file)") }
            if consensus && detector != nil { throw ValidationError("--consensus and --detector are alternatives; give one") }
            guard (0...1).contains(minConfidence) else { throw ValidationError("--min-confidence must be in 0...1") }
        }

        func run() throws {
            guard let path = library.path else { return }
            let store = try LibraryOptions.open(path, .existing)
            let writer = SafeTagWriter(keepsBackup: backup)
            let reports = Tactus.Tags.files(files).map { file in
                do {
                    return try tag(file, from: store, with: writer)
                } catch {
                    return TagReport(file: file, failure: error)
                }
            }
            try TagReport.print(
                reports, json: output.json, counted: [dryRun ? "would-write" : "written", "skipped", "failed"])
        }

        private func tag(_ file: String, from store: Library, with writer: SafeTagWriter) throws -> TagReport {
            let format = try TagFile.format(of: file)
            let song = try TagReport.song(of: file)
            var report = TagReport(file: file, song: song.hex, outcome: "skipped")
            report.from = detector ?? "consensus"
            guard format.holdsBPM else {
                let kind = URL(fileURLWithPath: file).pathExtension.lowercased()
                return report.because("unsupported format for BPM tags (\(kind.isEmpty ? format.rawValue : kind))")
            }
            guard try store.song(song) != nil else { return report.because("not in the library (no analysis)") }
            let tempo: (bpm: Double?, confidence: Double?)
            if let detector {
                let newest = try store.analyses(of: song).filter { $0.record.analysis.detector == detector }
                    .max { $0.record.analyzedAt < $1.record.analyzedAt }
                guard let newest else { return report.because("no analysis by \(detector)") }
                tempo = (newest.record.analysis.bpm, newest.record.analysis.confidence)
            } else {
                guard let found = try store.consensus(of: song) else { return report.because("no analysis") }
                tempo = (found.bpm, found.confidence)
            }
            report.confidence = tempo.confidence
            guard let bpm = tempo.bpm else { return report.because("no tempo found by \(report.from ?? "")") }
            report.bpm = bpm
            if minConfidence > 0 {
                guard let confidence = tempo.confidence else { return report.because("no confidence recorded") }
                guard confidence >= minConfidence else {
                    return report.because(String(format: "confidence %.2f below --min-confidence %g", confidence, minConfidence))
                }
            }
            if dryRun {
                report.fields = try writer.check(bpm: bpm, for: file)
                report.outcome = "would-write"
                return report
            }
            let written = try writer.write(bpm: bpm, to: file)
            report.outcome = "written"
            report.fields = written.fields
            report.backup = written.backup
            let rewritten = try TagReport.song(of: file)
            do {
                try store.songRewritten(song, as: rewritten, byteSize: try TagReport.size(of: file))
                report.newSong = rewritten.hex
            } catch {
                report.reason = "written, but the library still names the old bytes: \(error)"
            }
            return report
        }
    }
}

/// What `tags read` and `tags write` did with one file: a line of their table or of their JSON Lines.
struct TagReport: Encodable {
    var file: String
    var song: String?
    /// imported, written, would-write, skipped or failed.
    var outcome: String
    /// The tag as read (`tags read`).
    var tag: String?
    var bpm: Double?
    var confidence: Double?
    /// consensus, or the detector whose tempo is written (`tags write`).
    var from: String?
    var fields: [TagField]?
    var backup: String?
    /// The song's new SHA-256 after a write.
    var newSong: String?
    var reason: String?
    /// The error's code, for failures.
    var code: String?

    enum CodingKeys: String, CodingKey {
        case file, song, outcome, tag, bpm, confidence, from, fields, backup, newSong = "new_song", reason, code
    }

    init(file: String, song: String?, outcome: String) {
        self.file = file
        self.song = song
        self.outcome = outcome
    }

    /// A failure: the error's message names the file.
    init(file: String, failure: any Error) {
        self.init(file: file, song: nil, outcome: "failed")
        switch failure {
        case let error as TagError:
            (reason, code) = (error.description, error.code)
        case let error as AudioError:
            (reason, code) = (error.description, error.code)
        case let error as StoreError:
            (reason, code) = ("\(file): \(error.description)", "library")
        default:
            (reason, code) = ("\(file): \(failure)", "internal")
        }
    }

    func because(_ reason: String) -> TagReport {
        var report = self
        report.reason = reason
        return report
    }

    /// The SHA-256 of the file's bytes: the song's identity in the library.
    static func song(of file: String) throws(AudioError) -> SongID {
        try SongID(of: .file(file))
    }

    static func size(of file: String) throws -> Int {
        guard let size = (try FileManager.default.attributesOfItem(atPath: file)[.size] as? NSNumber)?.intValue else {
            throw CommandFailure("\(file): the file system reports no size")
        }
        return size
    }

    /// Prints the reports (a table and a count of each outcome in `counted`, or JSON Lines);
    /// exit status 1 when any failed.
    static func print(_ reports: [TagReport], json: Bool, counted: [String]) throws {
        if json {
            for report in reports { try Output.jsonLine(report) }
        } else {
            Output.table(
                ["file", "outcome", "BPM", "detail"],
                reports.map { report in
                    let detail = report.reason ?? report.fields.map { $0.map { "\($0.name)=\($0.value)" }.joined(separator: " ") }
                    return [report.file, report.outcome, Output.bpm(report.bpm), detail ?? report.tag.map { "tag '\($0)'" } ?? ""]
                })
            Swift.print(counted.map { outcome in "\(outcome) \(reports.filter { $0.outcome == outcome }.count)" }.joined(separator: ", "))
        }
        if reports.contains(where: { $0.outcome == "failed" }) { throw ExitCode.failure }
    }
}
