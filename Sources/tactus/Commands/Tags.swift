import ArgumentParser
import Foundation
import TactusAudio
import TactusClient
import TactusLibraryRoots
import TactusLibraryService
import TactusModel
import TactusProtocol
import TactusServiceHost
import TactusStore
import TactusTags

extension Tactus {
    /// `tactus tags`: BPM tags in the files themselves, read into the library or written from it.
    struct Tags: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "tags",
            abstract: "Read BPM tags into the library as reference tempi, or write the library's tempi into files' tags.",
            discussion: """
                Songs are named as every command names them: a file (hashed), a folder (every \
                audio file under it), a SHA-256 or a prefix of 8+ hex digits, a stored path or \
                file name; --all takes every song of the library. Tags are read and written \
                through TagLib.

                With --db, the command opens the library file and the files on this machine: a \
                file or folder named, or the stored path of a song named otherwise. Without \
                --db, the server does the work on its own files: only files below its library \
                roots (songs analysed in place, `tactus scan`) are read or written; other songs \
                are reported as skipped.

                Examples:
                  tactus tags read ~/Music --db lib.sqlite
                  tactus tags read --all
                  tactus tags write --min-confidence 0.5 --dry-run ~/Music/*.flac --db lib.sqlite
                  tactus tags write --detector comb-filter dev_039.mp3 3f9a3f9a
                """,
            subcommands: [Read.self, Write.self])

        /// The files named, each folder replaced by the audio files under it (in name order).
        static func files(_ paths: [String]) -> [String] {
            Tactus.Analyze.expanding(paths).files
        }
    }
}

/// The songs a `tags` command takes: `SONG...` or `--all`.
struct TagSongOptions: ParsableArguments {
    @Argument(help: ArgumentHelp(
        "Files, folders (every audio file under them), SHA-256s or prefixes (8+ hex digits), stored paths or file names.",
        valueName: "song"))
    var songs: [String] = []

    @Flag(help: "Every song of the library.")
    var all = false

    func validate() throws {
        if songs.isEmpty == !all { throw ValidationError("Give songs, or --all (not both).") }
    }
}

extension Tactus.Tags {
    /// `tactus tags read [SONG...|--all] [--db PATH]`
    struct Read: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Import the files' BPM tags as reference tempi (source `tag`).",
            discussion: """
                Each file's BPM tag (MP3: TXXX:BPM when present, else TBPM; FLAC, Ogg Vorbis and \
                Opus: the BPM comment; MP4: tmpo) becomes the reference tempo of its song, so \
                `tactus compare` shows how the tags agree with each detector and lists the tags \
                that look wrong. A song keeps a reference set by hand or from a CSV file unless \
                --replace is given. Files without a tag, with a tag that is not a tempo in \
                1...1000, or not in the library are skipped, with the reason.

                With --json, one object per file: file, song, outcome (imported, skipped or \
                failed), tag (the text), bpm, reason, code. Exit status 1 when any file failed.

                Example: tactus tags read ~/Music/*.mp3 --db lib.sqlite
                """)

        @OptionGroup var selection: TagSongOptions

        @Flag(help: "Replace reference tempi set by hand or from a CSV file.")
        var replace = false

        @OptionGroup var source: LibrarySourceOptions
        @OptionGroup var output: OutputOptions

        func run() throws {
            let run = try TagRun(selection: selection, source: source, json: output.json)
            try run.perform(TagsRequest(action: "read", replace: replace ? true : nil)) { tags, entry, song in
                tags.read(entry, expected: song, replace: replace)
            }
            try run.finish(counted: [.imported, .skipped, .failed])
        }
    }

    /// `tactus tags write [--consensus | --detector NAME] [SONG...|--all] [--db PATH]`
    struct Write: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write the library's tempo of each song into its file's BPM tag.",
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
                song takes it, keeping its analyses and reference tempo. Each file is opened once, \
                without following a symbolic link, and worked on through that descriptor and its \
                folder's: a file that is a link, or whose name is swapped while it is written, is \
                refused and named, and nothing outside its folder is touched.

                Each file is reported as written (would-write with --dry-run), skipped (not in \
                the library, no analysis, no tempo, below --min-confidence, unsupported format, \
                no file below the server's roots, being analysed) or failed (missing, read-only, \
                not audio...), with the reason. With --json, one object per file: file, song, \
                outcome, bpm, confidence, from, fields [{name, value}], backup, new_song, reason, \
                code. Exit status 1 when any file failed.

                Example: tactus tags write --detector comb-filter --min-confidence 0.4 song.mp3 --db lib.sqlite
                """)

        @OptionGroup var selection: TagSongOptions

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

        @OptionGroup var source: LibrarySourceOptions
        @OptionGroup var output: OutputOptions

        func validate() throws {
            if consensus && detector != nil { throw ValidationError("--consensus and --detector are alternatives; give one") }
            guard (0...1).contains(minConfidence) else { throw ValidationError("--min-confidence must be in 0...1") }
        }

        func run() throws {
            let run = try TagRun(selection: selection, source: source, json: output.json)
            let request = TagsRequest(
                action: "write", detector: detector, minConfidence: minConfidence > 0 ? minConfidence : nil, dryRun: dryRun ? true : nil,
                backup: backup ? true : nil)
            let options = TagWriteOptions(detector: detector, minConfidence: minConfidence, dryRun: dryRun, backup: backup)
            try run.perform(request) { tags, entry, song in tags.write(entry, expected: song, options: options) }
            try run.finish(counted: [dryRun ? .wouldWrite : .written, .skipped, .failed])
        }
    }
}

/// One `tags read` or `tags write`: the songs chosen, found as files here (`--db`) or sent to the
/// server, and their reports, printed as they come with --json, as a table at the end otherwise.
///
/// Here, each file is opened once with its folder, without following a link (a stored path
/// below its root, a file named in its folder), and its tags are read and written through those
/// descriptors in a service host process (``IsolatedTagger``, as a server does): a file that is
/// a symbolic link or not a regular file, or that crashes TagLib, is reported failed, naming it.
final class TagRun {
    /// A file here and the song the library says it holds (nil: the file's content decides).
    struct Target {
        /// Where the file is.
        enum Place {
            /// A file named on the command line (or found under a folder named there).
            case named(String)
            /// A song's stored location: opened below its root.
            case stored(SongLocation)
        }

        var place: Place
        var song: SongID?

        /// How reports name the file.
        var file: String {
            switch place {
            case .named(let path): path
            case .stored(let location): location.absolutePath
            }
        }

        /// The file, opened with its folder.
        func open() throws(LibraryRootsError) -> LibraryEntry {
            switch place {
            case .named(let path):
                return try LibraryRoots.openEntry(atPath: path)
            case .stored(let location):
                let root = LibraryRoots([location.root])
                return try root.openEntry(root: root.directories[0], relative: location.path, named: location.absolutePath)
            }
        }
    }

    private let selection: TagSongOptions
    private let source: LibrarySource
    private let json: Bool
    private(set) var reports = [TagReport]()

    init(selection: TagSongOptions, source options: LibrarySourceOptions, json: Bool) throws {
        self.selection = selection
        self.json = json
        source = try LibrarySource(options, mode: .existing)
    }

    /// Reads or writes each song chosen: here by `local` with a library file (each file opened
    /// with its folder, the song the library says it holds), else by the server with `request`
    /// (its songs or paging filled in here).
    func perform(_ request: TagsRequest, local: (LibraryTags, LibraryEntry, SongID?) -> TagReport) throws {
        switch source {
        case .file(let service):
            let hosts = Self.tagHosts()
            defer { hosts.stop() }
            let tags = LibraryTags(library: service.library, tagger: IsolatedTagger(hosts: hosts))
            for target in try localTargets(service.library, resolving: { try SongLookup.resolve($0, in: service) }) {
                do throws(LibraryRootsError) {
                    report(local(tags, try target.open(), target.song))
                } catch {
                    var refused = TagReport(file: target.file, song: target.song, outcome: .failed).because(error.description)
                    refused.code = error.code
                    report(refused)
                }
            }
        case .server(let client):
            try performOnServer(request, client: client)
        }
    }

    /// The process in which TagLib reads and writes the files' tags, as a server's does: a file
    /// that crashes TagLib (an ID3 tag nesting chapters 200,000 deep overflows its stack) fails
    /// alone, named, and the others are still done.
    /// The memory the tags host may take beyond its own size: as `tactus serve`'s hosts by
    /// default (a file listing millions of chunks took one to 6 GB).
    static let tagHostMemoryMegabytes = 4096

    private static func tagHosts() -> ServiceHostPool {
        ServiceHostPool(
            configuration: ServiceHostPool.Configuration(
                executable: CommandLogging.executablePath,
                arguments: ["service-host", "--max-memory-mb", String(Self.tagHostMemoryMegabytes)], processes: 1,
                timeLimits: [.tagsRead: .seconds(60), .tagsWrite: .seconds(300)], memoryLimitMegabytes: Self.tagHostMemoryMegabytes),
            logger: CommandLogging.logger("tactus.tags", level: .error))
    }

    /// Prints the table and the count of each outcome in `counted` (text mode); exit status 1
    /// when any file failed.
    func finish(counted: [TagReport.Outcome]) throws {
        if !json {
            Output.table(
                ["FILE", "SONG", "OUTCOME", "BPM", "DETAIL"],
                reports.map { report in
                    let fields = report.fields.map { $0.map { "\($0.name)=\($0.value)" }.joined(separator: " ") }
                    return [report.file ?? "-", report.song?.short ?? "", report.outcome.rawValue, Output.bpm(report.bpm),
                            report.reason ?? fields ?? report.tag.map { "tag '\($0)'" } ?? ""]
                })
            print(counted.map { outcome in "\(outcome.rawValue) \(reports.filter { $0.outcome == outcome }.count)" }
                .joined(separator: ", "))
        }
        if reports.contains(where: { $0.outcome == .failed }) { throw ExitCode.failure }
    }

    private func report(_ report: TagReport) {
        reports.append(report)
        if json { try? Output.jsonLine(report) }
    }

    /// The files here for the songs chosen: folders walked, files as named, other names
    /// resolved in the library and taken at their first stored path present on this machine.
    private func localTargets(_ library: Library, resolving: ([String]) throws -> [SongResolution]) throws -> [Target] {
        var targets = [Target]()
        if selection.all {
            var offset = 0
            while case let page = try reportingFailures({ try library.songIDs(offset: offset, limit: 500) }), !page.isEmpty {
                for song in page { try add(song, file: nil, library, to: &targets) }
                offset += page.count
            }
            return targets
        }
        var names = [String]()
        for name in selection.songs {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: name, isDirectory: &isDirectory) {
                targets += (isDirectory.boolValue ? Tactus.Tags.files([name]) : [name]).map { Target(place: .named($0), song: nil) }
            } else {
                names.append(name)
            }
        }
        guard !names.isEmpty else { return targets }
        for resolution in try resolving(names) {
            guard let song = resolution.song else {
                report(failed(resolution))
                continue
            }
            try add(song, file: resolution.name, library, to: &targets)
        }
        return targets
    }

    /// `song` at its first stored location present here (whatever it now is: a link there is
    /// refused when opened, never followed), or a skipped report when it has none.
    private func add(_ song: SongID, file name: String?, _ library: Library, to targets: inout [Target]) throws {
        let locations = try reportingFailures { try library.locations(of: song) }.filter { !$0.missing }
        var status = stat()
        if let location = locations.first(where: { lstat($0.absolutePath, &status) == 0 }) {
            targets.append(Target(place: .stored(location), song: song))
        } else {
            report(TagReport(file: name, song: song, outcome: .skipped).because(
                "no file of this song on this machine (the library stores \(locations.isEmpty ? "no path" : "paths that are gone") "
                    + "for it): name the file itself"))
        }
    }

    /// The songs sent to the server, at most ``TagsRequest/maxSongs`` a request, or with --all
    /// the library paged through.
    private func performOnServer(_ base: TagsRequest, client: TactusClient) throws {
        if selection.all {
            var offset = 0
            var total = 1
            while offset < total {
                var request = base
                (request.all, request.offset, request.limit) = (true, offset, TagsRequest.maxSongs)
                let response = try reportingFailures { try client.tags(request) }
                response.files.forEach(report)
                total = response.total ?? 0
                offset += TagsRequest.maxSongs
            }
            return
        }
        var songs = [String]()
        for resolution in try SongLookup.resolve(Tactus.Tags.files(selection.songs), on: client) {
            if let song = resolution.song { songs.append(song.hex) } else { report(failed(resolution)) }
        }
        var start = 0
        while start < songs.count {
            var request = base
            request.songs = Array(songs[start..<min(start + TagsRequest.maxSongs, songs.count)])
            try reportingFailures { try client.tags(request) }.files.forEach(report)
            start += TagsRequest.maxSongs
        }
    }

    private func failed(_ resolution: SongResolution) -> TagReport {
        var report = TagReport(file: resolution.name, song: nil, outcome: .failed)
            .because(SongLookup.message(resolution).joined(separator: "\n"))
        report.code = resolution.problem?.code
        return report
    }
}
