import ArgumentParser
import Foundation
import TactusModel
import TactusPlot
import TactusStore

extension Tactus {
    /// `tactus compare`: detectors side by side, for one song or the whole library.
    struct Compare: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "compare",
            abstract: "Compare the detectors on one song, or over the whole library.",
            discussion: """
                With a song (a SHA-256, a prefix of at least 8 hex digits, or a file), shows every \
                detector's and preset's result, the consensus and the reference tempo, marking \
                results within 4 % of the reference and octave errors. Without one, shows how \
                often each pair of detectors agrees, each detector's accuracy against the \
                reference tempi (Acc1, Acc2, mean absolute error) and the library's tempo histogram.

                With --db, reads the library file; otherwise asks the server (--server), which \
                answers the same way (a file named as the song is hashed here and its SHA-256 sent).

                --plot FILE (library comparison only) also draws it: the agreement matrix, the \
                Acc1/Acc2 bars per detector and the tempo histogram, as FILE.svg or FILE.png \
                (converted by rsvg-convert, from the Debian package librsvg2-bin).
                """)

        @OptionGroup var source: LibrarySourceOptions
        @OptionGroup var output: OutputOptions

        @Argument(help: ArgumentHelp("The song to compare (default: the whole library).", valueName: "song-or-file"))
        var song: String?

        @Option(help: "Width of the histogram's bins, in BPM.")
        var binWidth = 10.0

        @Option(help: ArgumentHelp("Also draw the library comparison into this image (.svg or .png).", valueName: "file"))
        var plot: String?

        func validate() throws {
            guard let plot else { return }
            guard song == nil else { throw ValidationError("--plot draws the comparison of the whole library; leave out the song.") }
            do throws(PlotError) { _ = try ImageFile(path: plot) } catch { throw ValidationError(error.description) }
        }

        func run() throws {
            let library = try LibrarySource(source, mode: .readOnly)
            if let song {
                let comparison = try library.compare(song: song)
                if output.json { try Output.jsonLine(comparison) } else { show(comparison) }
            } else {
                let comparison = try library.compareLibrary(binWidth: binWidth)
                if output.json { try Output.jsonLine(comparison) } else { show(comparison) }
                if let plot { try draw(comparison, to: plot) }
            }
        }

        private func draw(_ comparison: LibraryComparison, to path: String) throws {
            let name = source.library.path.map { URL(fileURLWithPath: $0).lastPathComponent } ?? source.server.endpoint
            let document = LibraryFigure(comparison, title: "How the detectors compare: \(name)").document()
            do throws(PlotError) {
                try ImageFile(path: path).write(document)
            } catch {
                throw CommandFailure(error.description)
            }
            if !output.json { print(lines: ["", "Wrote \(path) (\(Int(document.width)) × \(Int(document.height)) px)."]) }
        }

        private func show(_ comparison: SongComparison) {
            print("song       \(comparison.song)")
            print("file       \(comparison.file)")
            if let title = comparison.title { print("title      \(title)") }
            if let artist = comparison.artist { print("artist     \(artist)") }
            print("duration   \(Output.clock(comparison.durationS))")
            if let reference = comparison.reference {
                var looks = ""
                if reference.source == "tag", let relation = comparison.consensusRelation, relation != .match {
                    looks = "  the tag looks wrong: the consensus is " + (relation == .wrong ? "unrelated" : mark(relation))
                }
                print("reference  \(Output.bpm(reference.bpm)) BPM (\(reference.source))" + looks)
            }
            let agreeing = comparison.consensus.detectors.joined(separator: ", ")
            print("consensus  \(Output.bpm(comparison.consensus.bpm)) BPM\(agreeing.isEmpty ? "" : " (\(agreeing))")"
                + (comparison.consensusRelation.map { "  \(mark($0))" } ?? ""))
            print()
            Output.table(
                ["DETECTOR", "VERSION", "STATUS", "BPM", "CONF", "CANDIDATES", "TIME", "VS REFERENCE"],
                comparison.results.map { result in
                    [
                        result.label, result.version, result.status.rawValue, Output.bpm(result.bpm),
                        String(format: "%.2f", result.confidence),
                        result.candidates.map { String(format: "%.1f", $0.bpm) }.joined(separator: " "),
                        String(format: "%.2f s", result.seconds),
                        result.failure.map { "\($0.code): \($0.message)" }
                            ?? (result.bpm == nil ? "" : result.relation.map(mark) ?? ""),
                    ]
                })
        }

        private func mark(_ relation: ReferenceRelation) -> String {
            switch relation {
            case .match: return "within 4 %"
            case .octave: return "octave error"
            case .triple: return "triple/third"
            case .wrong: return "wrong"
            }
        }

        private func show(_ comparison: LibraryComparison) {
            print("\(comparison.songs) songs")
            print()
            print("Agreement between detectors (songs where both found a tempo)")
            Output.table(
                ["DETECTORS", "SONGS", "WITHIN 4 %", "UP TO AN OCTAVE"],
                comparison.agreements.map {
                    ["\($0.first) / \($0.second)", "\($0.songs)", Output.percent($0.agree), Output.percent($0.agreeOctave)]
                })
            print()
            print("Accuracy against reference tempi")
            if comparison.accuracy.isEmpty {
                print("no reference tempi (set them with `tactus truth`)")
            } else {
                Output.table(
                    ["DETECTOR", "COUNT", "ACC1", "ACC2", "MAE"],
                    comparison.accuracy.map {
                        [$0.detector, "\($0.count)", Output.percent($0.acc1), Output.percent($0.acc2),
                         $0.meanAbsoluteError.map { String(format: "%.2f BPM", $0) } ?? "-"]
                    })
            }
            print()
            print("Consensus tempo histogram")
            let largest = comparison.histogram.map(\.count).max() ?? 0
            for bin in comparison.histogram {
                let bar = String(repeating: "#", count: largest == 0 ? 0 : (bin.count * 50 + largest - 1) / largest)
                print(String(format: "%6.0f-%-6.0f %7d  ", bin.lower, bin.lower + bin.width, bin.count) + bar)
            }
            print()
            showSongsToCheck(comparison)
            if let tags = comparison.tags {
                print()
                show(tags)
            }
        }

        /// How the files' BPM tags agree with the detectors, and the tags that look wrong.
        private func show(_ tags: LibraryComparison.TagAgreement) {
            print("BPM tags (\(tags.songs) songs with a tag read by `tactus tags read`) against the detectors")
            Output.table(
                ["DETECTOR", "SONGS", "SAME", "OCTAVE", "TRIPLE/THIRD", "UNRELATED"],
                tags.detectors.map {
                    [$0.detector, "\($0.songs)", Output.percent($0.match), Output.percent($0.octave), Output.percent($0.triple),
                     Output.percent($0.unrelated)]
                })
            guard tags.suspectsTotal > 0 else {
                print("Tags that look wrong: none (every tag agrees with its song's consensus)")
                return
            }
            let shown = tags.suspects.count < tags.suspectsTotal ? ", the \(tags.suspects.count) most confident" : ""
            print("Tags that look wrong: \(tags.suspectsTotal) (the consensus is an octave, a triple or unrelated\(shown))")
            Output.table(
                ["SONG", "TAG", "CONSENSUS", "CONF", "LOOKS", "FILE"],
                tags.suspects.map {
                    [$0.song.short, Output.bpm($0.tag), Output.bpm($0.consensus.bpm),
                     $0.consensus.confidence.map { String(format: "%.2f", $0) } ?? "-", $0.looks, $0.file]
                })
        }

        /// The songs whose tempo a person should check, least confident first.
        private func showSongsToCheck(_ comparison: LibraryComparison) {
            guard comparison.toCheckTotal > 0 else {
                print("Songs to check: none (every detector agrees with a confident consensus)")
                return
            }
            let shown = comparison.toCheck.count < comparison.toCheckTotal ? ", the \(comparison.toCheck.count) least confident" : ""
            print("Songs to check: \(comparison.toCheckTotal) (detectors disagree or the consensus confidence is under "
                  + "\(LibraryComparison.lowConfidence)\(shown))")
            let detectors = Array(Set(comparison.toCheck.flatMap { $0.tempi.map(\.detector) })).sorted()
            Output.table(
                ["SONG", "CONSENSUS", "CONF"] + detectors.map { $0.uppercased() } + ["WHY", "FILE"],
                comparison.toCheck.map { entry in
                    let tempi = detectors.map { name in entry.tempi.first { $0.detector == name }.map { Output.bpm($0.bpm) } ?? "" }
                    return [String(entry.song.hex.prefix(8)), Output.bpm(entry.consensus.bpm),
                            entry.consensus.confidence.map { String(format: "%.2f", $0) } ?? "-"]
                        + tempi + [entry.reasons.joined(separator: ", "), entry.file]
                })
        }
    }
}
