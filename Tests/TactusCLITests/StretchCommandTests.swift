import Foundation
import TactusAudio
import TactusTestSupport
import Testing

/// `tactus stretch -o FILE` on this machine: the output is a new file, put in place whole; an
/// existing one is replaced only with --force, the song itself never, and a link is never
/// written through.
@Suite struct StretchCommandTests {
    /// A 12 s drum pattern at 120 BPM, and the arguments that stretch it to 126 into `output`.
    struct Song {
        let directory: TemporaryDirectory
        let path: String
        let bytes: Data

        init() throws {
            directory = try TemporaryDirectory(prefix: "tactus-stretch-output")
            path = directory.file("song.flac")
            bytes = Data(try TestSong.drumPattern(bpm: 120, seconds: 12, format: .flac))
            try bytes.write(to: URL(fileURLWithPath: path))
        }

        func stretch(to output: String, _ extra: [String] = []) throws -> CLI.Result {
            try CLI.run(["stretch", path, "--bpm", "126", "--from-bpm", "120", "-o", output] + extra)
        }

        func contents(_ path: String) throws -> Data {
            try Data(contentsOf: URL(fileURLWithPath: path))
        }

        /// The names in the folder: no temporary file is left behind.
        func names() throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        }
    }

    @Test func theSongItselfIsNeverTheOutputEvenWithForceOrUnderAnotherName() throws {
        let song = try Song()
        try FileManager.default.linkItem(atPath: song.path, toPath: song.directory.file("same.flac"))
        for (output, extra) in [(song.path, []), (song.path, ["--force"]), (song.directory.file("same.flac"), ["--force"])] {
            let run = try song.stretch(to: output, extra)
            #expect(run.status == 1, "\(output) \(extra): \(run.standardError)")
            #expect(run.standardError.contains("cannot write '\(output)': it is the file being read"), "\(run.standardError)")
            #expect(try song.contents(song.path) == song.bytes, "the song was changed by -o \(output) \(extra)")
        }
        #expect(try song.names() == ["same.flac", "song.flac"])
    }

    @Test func anExistingFileIsReplacedOnlyWithForce() throws {
        let song = try Song()
        let output = song.directory.file("out.wav")
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: output))
        let refused = try song.stretch(to: output)
        #expect(refused.status == 1)
        #expect(refused.standardError.contains("cannot write '\(output)': it exists (give --force to replace it)"), "\(refused.standardError)")
        #expect(try song.contents(output) == Data("keep me".utf8))
        let forced = try song.stretch(to: output, ["--force"])
        #expect(forced.status == 0, "\(forced.standardError)")
        #expect(abs(Double(try DecodedAudio(decoding: .file(output)).samples.count) / 22_050 - 12 * 120 / 126) < 0.1)
        #expect(try song.names() == ["out.wav", "song.flac"])
    }

    @Test func aLinkIsNeverWrittenThrough() throws {
        let song = try Song()
        let outside = try TemporaryDirectory(prefix: "tactus-stretch-outside")
        let target = outside.file("private.txt")
        try Data("outside".utf8).write(to: URL(fileURLWithPath: target))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: target)
        let link = song.directory.file("link.wav"), dangling = song.directory.file("dangling.wav")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        try FileManager.default.createSymbolicLink(atPath: dangling, withDestinationPath: outside.file("new.wav"))
        for output in [link, dangling] {
            let run = try song.stretch(to: output)
            #expect(run.status == 1, "\(output): \(run.standardError)")
            #expect(run.standardError.contains("cannot write '\(output)': it exists"), "\(run.standardError)")
        }
        #expect(!FileManager.default.fileExists(atPath: outside.file("new.wav")), "the dangling link was followed")
        // With --force the link itself is replaced; what it led to is untouched.
        let forced = try song.stretch(to: link, ["--force"])
        #expect(forced.status == 0, "\(forced.standardError)")
        #expect(try song.contents(target) == Data("outside".utf8))
        #expect((try FileManager.default.attributesOfItem(atPath: target))[.posixPermissions] as? Int == 0o600)
        #expect((try FileManager.default.attributesOfItem(atPath: link))[.type] as? FileAttributeType == .typeRegular)
        #expect(try song.names() == ["dangling.wav", "link.wav", "song.flac"])
    }

    @Test func aDirectoryIsNamedAsOne() throws {
        let song = try Song()
        let folder = song.directory.file("renders")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        for (output, extra) in [(folder, []), (folder, ["--force"]), (folder + "/", [])] {
            let run = try song.stretch(to: output, extra)
            #expect(run.status == 1)
            #expect(run.standardError.contains("cannot write '\(output)': it is a directory"), "\(run.standardError)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty)
        #expect(try song.names() == ["renders", "song.flac"])
    }

    /// `--force` replaces a regular file or a link, never a FIFO another program reads (nor a
    /// device: `--force` over /dev/null as root made it a regular file), which is named.
    @Test func aFIFOIsNeverReplacedEvenWithForce() throws {
        let song = try Song()
        let fifo = song.directory.file("pipe.wav")
        try #require(mkfifo(fifo, 0o644) == 0, "mkfifo: \(String(cString: strerror(errno)))")
        for extra in [[], ["--force"]] {
            let run = try song.stretch(to: fifo, extra)
            #expect(run.status == 1)
            #expect(run.standardError.contains("cannot write '\(fifo)': it is a FIFO (a named pipe)"), "\(run.standardError)")
        }
        var status = stat()
        #expect(lstat(fifo, &status) == 0 && status.st_mode & S_IFMT == S_IFIFO)
        #expect(try song.names() == ["pipe.wav", "song.flac"])
    }
}
