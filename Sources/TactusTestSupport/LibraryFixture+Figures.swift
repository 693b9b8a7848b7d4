import Foundation
import TactusDetector
import TactusModel
import TactusStore

extension LibraryFixture {
    /// Songs and analyses for the figure tests: detectors `alpha`, `beta` and `gamma`, windows
    /// that wander 1 BPM around the tempo, and 180-second songs with a full envelope.
    public enum Figures {
        /// A detector without parameters of its own.
        public static func descriptor(_ name: String, version: String = "1") -> DetectorDescriptor {
            DetectorDescriptor(name: name, version: version, summary: "test detector", specific: [])
        }

        /// 40 windows of 6 s every 4.5 s at about `bpm`, every tenth without a tempo, strengths cycling 0 to 0.75.
        public static func windows(bpm: Double, count: Int = 40) -> [AnalysisWindow] {
            (0..<count).map { (i: Int) -> AnalysisWindow in
                let tempo: Double? = i % 10 == 9 ? nil : bpm + Double(i % 3) * 0.5
                let energy = 0.01 * Double(i % 5) + 0.001
                return AnalysisWindow(startS: Double(i) * 4.5, durationS: 6, energy: energy, bpm: tempo, strength: Double(i % 4) / 4)
            }
        }

        /// An analysis by `detector` finding `bpm`, with three candidates.
        public static func analysis(_ detector: String, bpm: Double, version: String = "1", windows: Int = 40) -> TempoAnalysis {
            let descriptor = descriptor(detector, version: version)
            return TempoAnalysis(
                descriptor: descriptor, params: ParameterSet(),
                output: DetectorOutput(
                    bpm: bpm, confidence: 0.8,
                    candidates: [TempoCandidate(bpm: bpm, strength: 1), TempoCandidate(bpm: bpm / 2, strength: 0.6),
                                 TempoCandidate(bpm: bpm * 2, strength: 0.3)],
                    windows: Self.windows(bpm: bpm, count: windows)),
                seconds: 0.2)
        }

        /// An envelope of 180 s: a quiet intro, a loud middle, a fade out.
        public static func envelope() -> EnergyEnvelope {
            let hop = 1024.0 / 44100
            let count = Int(180 / hop)
            return EnergyEnvelope(hopS: hop, values: (0..<count).map { i in
                let t = Double(i) * hop
                let level = t < 20 ? 0.001 : t < 160 ? 0.1 : 0.1 * (180 - t) / 20
                return Float(level * (i % 22 == 0 ? 4 : 1))
            })
        }

        /// Song `n`: a FLAC file's record with the 180 s envelope.
        public static func song(_ n: Int, title: String? = nil, artist: String? = nil) -> SongRecord {
            SongRecord(
                id: SongID(hashing: Data("plot song \(n)".utf8)), fileName: "song-\(n).flac", byteSize: 1000 + n, format: "flac",
                codec: "flac", sampleRate: 44100, channels: 2, durationS: 180, tags: AudioTags(title: title, artist: artist),
                envelope: envelope())
        }

        /// A library in `directory` with `count` songs, each analysed by alpha, beta and gamma.
        public static func library(in directory: TemporaryDirectory, count: Int = 12) throws -> Library {
            let library = try Library(path: directory.file("library.sqlite"))
            _ = try library.record((0..<count).map { n in
                let bpm = 90 + Double(n * 7 % 60)
                return SongAnalyses(
                    song: song(n, title: n == 0 ? "First & Best" : "Song \(n)", artist: "Artist"),
                    analyses: [
                        AnalysisRecord(analysis("alpha", bpm: bpm)),
                        AnalysisRecord(analysis("beta", bpm: n % 3 == 0 ? bpm * 2 : bpm)),
                        AnalysisRecord(analysis("gamma", bpm: n % 4 == 0 ? bpm * 1.3 : bpm)),
                    ])
            })
            return library
        }
    }
}
