import Foundation
import TactusAnalysis
import TactusAudio
import TactusModel
import TactusPlot
import TactusStore
import TactusTestSupport
import Testing

/// `tactus plot` and `tactus compare --plot`, run as processes on real library files.
@Suite struct PlotCommandTests {
    static let hasConverter = ImageFile.converterPath() != nil

    @Test func plotsASongOfTheLibraryByPrefix() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-plot-cli")
        _ = try Sample.library(in: directory, count: 3)
        let song = Sample.song(1).id.hex
        let run = try CLI.run(
            ["plot", String(song.prefix(10)), "--db", directory.file("library.sqlite"), "-o", "song.svg"], in: directory.path)
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardOutput.contains("Wrote song.svg") && run.standardOutput.contains("Artist – Song 1"))
        let root = try ParsedSVG.parse(try String(contentsOfFile: directory.file("song.svg"), encoding: .utf8))
        #expect(root.all(class: "series").compactMap { $0.attributes["data-detector"] } == ["alpha", "beta", "gamma", "alpha", "beta", "gamma"])

        // Without -o: the song id's first 12 digits, in the current directory.
        let unnamed = try CLI.run(["plot", song, "--db", directory.file("library.sqlite")], in: directory.path)
        #expect(unnamed.status == 0, "\(unnamed.standardError)")
        #expect(FileManager.default.fileExists(atPath: directory.file("\(song.prefix(12)).svg")))
    }

    @Test(.enabled(if: hasConverter, "rsvg-convert (librsvg2-bin) is not installed"))
    func writesAPNGAndDescribesItInJSON() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-plot-cli")
        _ = try Sample.library(in: directory, count: 2)
        let song = Sample.song(0).id.hex
        let run = try CLI.run(["plot", song, "--db", directory.file("library.sqlite"), "-o", "song.png", "--json"], in: directory.path)
        #expect(run.status == 0, "\(run.standardError)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any])
        #expect(summary["song"] as? String == song && summary["format"] as? String == "png" && summary["source"] as? String == "library")
        #expect(summary["detectors"] as? [String] == ["alpha", "beta", "gamma"])
        let size = try PNGHeader.size(atPath: directory.file("song.png"))
        #expect(size.width == summary["width"] as? Int && size.height == summary["height"] as? Int)
    }

    @Test func aFileMissingFromTheLibraryIsAnalysedInProcess() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-plot-cli")
        _ = try Sample.library(in: directory, count: 1)
        try AudioFileWriter(.flac, tags: AudioTags(title: "Click", artist: "Tactus")).write(
            [Synth.clickTrack(bpm: 128, seconds: 12, sampleRate: 22_050)], sampleRate: 22_050, to: directory.file("click.flac"))
        let output = Self.hasConverter ? "click.png" : "click.svg"
        let run = try CLI.run(["plot", "click.flac", "--db", directory.file("library.sqlite"), "-o", output, "--json"], in: directory.path)
        #expect(run.status == 0, "\(run.standardError)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any])
        #expect(summary["source"] as? String == "analysis")
        #expect((summary["detectors"] as? [String])?.count == BuiltinDetectors.registry.names.count)
        #expect(FileManager.default.fileExists(atPath: directory.file(output)))
    }

    @Test func badSongNamesAndOutputsAreClearErrors() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-plot-cli")
        _ = try Sample.library(in: directory, count: 1)
        let database = directory.file("library.sqlite")

        let unknown = try CLI.run(["plot", "0123456789abcdef", "--db", database, "-o", "x.svg"], in: directory.path)
        #expect(unknown.status == 1)
        #expect(unknown.standardError.contains("no song in the library matches '0123456789abcdef'"), "\(unknown.standardError)")
        let notAName = try CLI.run(["plot", "no-such-song", "--db", database, "-o", "x.svg"], in: directory.path)
        #expect(notAName.status == 1)
        #expect(notAName.standardError.contains("no song in the library matches 'no-such-song'"), "\(notAName.standardError)")
        let missingLibrary = try CLI.run(["plot", "0123456789abcdef", "--db", directory.file("none.sqlite")], in: directory.path)
        #expect(missingLibrary.status == 1 && missingLibrary.standardError.contains("none.sqlite"), "\(missingLibrary.standardError)")
        let gif = try CLI.run(["plot", Sample.song(0).id.hex, "--db", database, "-o", "x.gif"], in: directory.path)
        #expect(gif.status == 2 && gif.standardError.contains(".svg or .png"), "\(gif.standardError)")
        let both = try CLI.run(["plot", Sample.song(0).id.hex, "--db", database, "--server", "tcp://127.0.0.1:1"], in: directory.path)
        #expect(both.status == 2 && both.standardError.contains("alternatives"), "\(both.standardError)")
        #expect(!FileManager.default.fileExists(atPath: directory.file("x.svg")))
    }

    @Test func compareDrawsTheLibraryComparison() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-plot-cli")
        let library = try Sample.library(in: directory, count: 8)
        for n in 0..<4 { try library.setReference(90 + Double(n * 7 % 60), for: Sample.song(n).id) }
        let database = directory.file("library.sqlite")
        let output = Self.hasConverter ? "compare.png" : "compare.svg"
        let run = try CLI.run(["compare", "--db", database, "--plot", output], in: directory.path)
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardOutput.contains("Accuracy against reference tempi") && run.standardOutput.contains("Wrote \(output)"))
        if Self.hasConverter {
            let size = try PNGHeader.size(atPath: directory.file(output))
            #expect(size.width == 1100 && size.height > 600)
        } else {
            _ = try ParsedSVG.parse(try String(contentsOfFile: directory.file(output), encoding: .utf8))
        }
        let json = try CLI.run(["compare", "--db", database, "--plot", "again.svg", "--json"], in: directory.path)
        #expect(
            json.status == 0 && (try? JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8))) != nil, "\(json.standardError)")

        let withSong = try CLI.run(["compare", Sample.song(0).id.hex, "--db", database, "--plot", "x.svg"], in: directory.path)
        #expect(withSong.status == 2 && withSong.standardError.contains("whole library"), "\(withSong.standardError)")
    }
}
