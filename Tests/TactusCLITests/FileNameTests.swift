import Foundation
import Glibc
import TactusTestSupport
import Testing

/// Files whose names are not UTF-8 (written by another system: `bad\xFF\xFE.wav`): tactus reads
/// files by UTF-8 paths, so it cannot open them, and says so, naming each with its bytes
/// escaped, instead of blaming a link or a missing file under a lossy spelling of the name.
@Suite struct FileNameTests {
    /// The name `bad\xFF\xFE.wav` as its bytes, and as tactus shows it.
    static let badName: [UInt8] = Array("bad".utf8) + [0xFF, 0xFE] + Array(".wav".utf8)
    static let shownName = #"bad\xFF\xFE.wav"#
    static let reason = "its name is not valid UTF-8"

    /// A folder holding a song under a UTF-8 name, the same song under `bad\xFF\xFE.wav`, and
    /// another in a folder named `sub\xFF`.
    static func folder() throws -> (directory: TemporaryDirectory, music: String) {
        let directory = try TemporaryDirectory(prefix: "tactus-names")
        let music = directory.file("music")
        try FileManager.default.createDirectory(atPath: music + "/sub", withIntermediateDirectories: true)
        for (index, name) in ["good.wav", "bad.wav", "sub/inner.wav"].enumerated() {
            try AudioFileWriter(.wav16).write(
                [Synth.drumPattern(bpm: 120, seconds: 8, sampleRate: 22_050, seed: UInt64(index + 1))], sampleRate: 22_050,
                to: music + "/" + name)
        }
        try rename(music + "/bad.wav", to: Array((music + "/").utf8) + badName)
        try rename(music + "/sub", to: Array((music + "/sub").utf8) + [0xFF])
        return (directory, music)
    }

    /// Renames `path` to the name `bytes`, which a Swift string cannot hold.
    static func rename(_ path: String, to bytes: [UInt8]) throws {
        let result = (bytes.map { CChar(bitPattern: $0) } + [0]).withUnsafeBufferPointer { Glibc.rename(path, $0.baseAddress!) }
        try #require(result == 0, "rename \(path): \(String(cString: strerror(errno)))")
    }

    @Test func analyzeNamesAFileWhoseNameIsNotUTF8() throws {
        let (directory, music) = try Self.folder()
        let run = try withExtendedLifetime(directory) { try CLI.run(["analyze", music, "--json"]) }
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.jsonLines.compactMap { $0["file"] as? String }.filter { $0.hasSuffix("good.wav") } == [music + "/good.wav"])
        let skipped = run.jsonLines.filter { $0["skipped"] != nil }
        let reasons = skipped.map { ($0["file"] as? String ?? "", ($0["skipped"] as? [String: Any])?["message"] as? String ?? "") }
        #expect(reasons.map(\.0).sorted() == [music + "/" + Self.shownName, music + #"/sub\xFF"#], "\(reasons)")
        #expect(reasons.allSatisfy { $0.1 == $0.0 + ": " + Self.reason + ", and tactus reads files by UTF-8 paths (rename it)" }, "\(reasons)")
        let text = try withExtendedLifetime(directory) { try CLI.run(["analyze", music]) }
        #expect(text.standardOutput.contains(music + "/" + Self.shownName + "  skipped: unreadable: "), "\(text.standardOutput)")
    }

    /// Folders deeper than any library (65 below the root) and paths longer than a worker can
    /// be sent (over 4096 bytes) are listed as skipped with the reason, not walked, hashed or
    /// sent to a worker; a song beside them is scanned.
    @Test func aScanSkipsFoldersTooDeepAndPathsTooLong() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-deep")
        let music = directory.file("music")
        try FileManager.default.createDirectory(atPath: music, withIntermediateDirectories: true)
        let song = { (name: String, seed: UInt64) in
            try AudioFileWriter(.wav16).write(
                [Synth.drumPattern(bpm: 120, seconds: 8, sampleRate: 22_050, seed: seed)], sampleRate: 22_050, to: music + "/" + name)
        }
        try song("ok.wav", 1)
        // 70 folders `d` deep, and 17 folders of 250 bytes (4,266 bytes of path): each with a
        // song at the bottom, moved in through descriptors (the path is too long to name whole).
        for (names, seed) in [(Array(repeating: "d", count: 70), UInt64(2)), (Array(repeating: String(repeating: "x", count: 250), count: 17), 3)] {
            try song("moving.wav", seed)
            var folder = open(music, O_RDONLY | O_DIRECTORY)
            for name in names {
                try #require(mkdirat(folder, name, 0o755) == 0, "mkdirat: \(String(cString: strerror(errno)))")
                let next = openat(folder, name, O_RDONLY | O_DIRECTORY)
                close(folder)
                folder = next
            }
            try #require(renameat(AT_FDCWD, music + "/moving.wav", folder, "song.wav") == 0, "renameat: \(String(cString: strerror(errno)))")
            close(folder)
        }
        let run = try CLI.run(["scan", "--db", directory.file("library.sqlite"), "--library-root", music, "--json"])
        #expect(run.status == 0, "\(run.standardError)")
        let summary = try #require(run.jsonLines.first)
        #expect(summary["files"] as? Int == 1 && summary["new"] as? Int == 1, "\(summary)")
        let skipped = (summary["skipped"] as? [[String: Any]] ?? []).map { ($0["path"] as? String ?? "", $0["reason"] as? String ?? "") }
        let deep = Array(repeating: "d", count: 65).joined(separator: "/")
        #expect(skipped.contains { $0.0 == music + "/" + deep && $0.1.contains("more than 64 folders below its root") }, "\(skipped.map(\.1))")
        #expect(skipped.contains { $0.0.utf8.count > 4096 && $0.1.contains("longer than the 4096") }, "\(skipped.map(\.1))")
        #expect(skipped.count == 2, "\(skipped.map(\.1))")
    }

    /// A FIFO dropped into a folder (opening one for reading waits for a writer) is skipped as
    /// not a regular file, at once; the song beside it is analysed.
    @Test func aFIFOInAFolderIsSkippedNotWaitedOn() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-fifo")
        let music = directory.file("music")
        try FileManager.default.createDirectory(atPath: music, withIntermediateDirectories: true)
        try AudioFileWriter(.wav16).write(
            [Synth.drumPattern(bpm: 120, seconds: 8, sampleRate: 22_050, seed: 1)], sampleRate: 22_050, to: music + "/song.wav")
        try #require(mkfifo(music + "/song.wav.bak", 0o644) == 0, "mkfifo: \(String(cString: strerror(errno)))")
        let run = try CLI.runProgram(CLI.binary, ["analyze", music, "--json"], timeout: .seconds(60))
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.jsonLines.compactMap { $0["file"] as? String }.contains(music + "/song.wav"), "\(run.standardOutput)")
        let skipped = run.jsonLines.filter { $0["skipped"] != nil }.map { ($0["skipped"] as? [String: Any])?["message"] as? String ?? "" }
        #expect(skipped == [music + "/song.wav.bak: cannot read the file: not a regular file"], "\(skipped)")
    }

    @Test func aScanNamesAFileWhoseNameIsNotUTF8() throws {
        let (directory, music) = try Self.folder()
        let run = try CLI.run(["scan", "--db", directory.file("library.sqlite"), "--library-root", music, "--json"])
        #expect(run.status == 0, "\(run.standardError)")
        let summary = try #require(run.jsonLines.first)
        #expect(summary["files"] as? Int == 1 && summary["new"] as? Int == 1, "\(summary)")
        let skipped = (summary["skipped"] as? [[String: Any]] ?? []).map { ($0["path"] as? String ?? "", $0["reason"] as? String ?? "") }
        #expect(skipped.map { ($0.0 as NSString).lastPathComponent }.sorted() == [Self.shownName, #"sub\xFF"#], "\(skipped)")
        #expect(skipped.allSatisfy { $0.1.hasPrefix(Self.reason) }, "\(skipped)")
    }
}
