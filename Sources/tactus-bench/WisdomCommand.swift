import ArgumentParser
import Foundation
import TactusAnalysis
import TactusDSP
import TactusTestSupport

/// `tactus-bench wisdom`: records FFTW's planner decisions for the transforms Tactus makes
/// (``FFTWisdom``) and writes them as the Swift source that loads them.
struct WisdomCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wisdom",
        abstract: "Record FFTW's plans for Tactus's transforms (FFTWisdom+Recorded.swift).",
        discussion: """
            Starting from no wisdom, plans real transforms (forward and inverse) of every power of two \
            from 16 to 262144 samples, then analyses a 20-second synthesised song with every built-in \
            detector at 8, 11.025, 12, 16, 22.05, 24, 32, 44.1, 48, 88.2, 96, 176.4 and 192 kHz (the \
            spectrogram frames and \
            paired spectra of each rate), and prints what FFTW's estimating planner decided as the Swift \
            source of FFTWisdom.recorded, or writes it to --write. Run it again when the transforms' sizes \
            or the FFTW version change (a size the recording lacks is planned as usual).
            """)

    @Option(help: ArgumentHelp("Write the Swift source to this file.", valueName: "path"))
    var write: String?

    static let rates = [8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000, 88200, 96000, 176_400, 192_000]

    func run() throws {
        let wisdom = FFTWisdom.record {
            for exponent in 4...18 {
                let fft = RealFFT(size: 1 << exponent)
                fft.forward()
                fft.inverse()
            }
            let analyzer = SongAnalyzer.builtin()
            for rate in Self.rates {
                let song = Synth.drumPattern(bpm: 120, seconds: 20, sampleRate: Double(rate), seed: 1)
                _ = analyzer.analyze(samples: song, sampleRate: Double(rate))
            }
        }
        guard wisdom.hasPrefix("(fftw-") else { throw BenchFailure("FFTW exported no wisdom") }
        let source = """
            // Written by `tactus-bench wisdom --write Sources/TactusDSP/FFTWisdom+Recorded.swift`: do not edit.
            extension FFTWisdom {
                /// FFTW's estimating planner's decisions for the transforms Tactus makes.
                static let recorded = #\"\"\"
            \(wisdom.trimmingCharacters(in: .whitespacesAndNewlines))
            \"\"\"#
            }

            """
        if let write {
            try source.write(toFile: write, atomically: true, encoding: .utf8)
            print("wrote \(write): \(wisdom.utf8.count) bytes of wisdom")
        } else {
            print(source, terminator: "")
        }
    }
}
