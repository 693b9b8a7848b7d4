import Foundation
import TactusAudio
import TactusDSP
import TactusDetector
import TactusModel

/// Whole-song analysis: decode a song once and feed every block to each chosen detector's
/// session and to the song's energy envelope, timing each detector. Detectors that compute a
/// front end alike (a spectrogram with the same frames) share it: it is computed once, by
/// the first session fed, so that detector's time includes it.
///
/// ```swift
/// let analyzer = try SongAnalyzer(detectors: [
///     BuiltinDetectors.registry.make("comb-filter"),
/// ])
/// let result = analyzer.analyze(.file("/music/song.mp3"))
/// print(result.consensus.bpm ?? "no tempo", result.error?.message ?? "")
/// ```
///
/// A song that cannot be decoded gives a ``SongAnalysis`` with its error, never
/// a thrown error or a crash, so one bad file never stops a batch. Detectors see mono blocks at
/// the file's own sample rate, NaN and infinite samples (a damaged float file) silenced once
/// for all of them (``TactusDetector/SignalFormat/samplesAreFinite``); they are written so
/// that results do not depend on the rate or the channel count. When every detector works at a
/// declared rate (``DetectorDescriptor/analysisSampleRate``), the decoder may deliver a lower
/// rate, at or above the highest of them, where it can do so natively
/// (``DecodingOptions/minimumSampleRate``).
public struct SongAnalyzer: Sendable {
    public let detectors: [any TempoDetector]
    public let decoding: DecodingOptions
    /// How long one song's analysis may take (wall clock, from the start of ``analyze(_:)``),
    /// or nil for no limit. The clock is read between decoded blocks, so a song past the limit
    /// stops within one block and fails with a `timeout` problem; the detectors' final step
    /// (their `finish`) is not interrupted.
    public let timeLimit: Duration?

    /// `decoding`'s minimum sample rate, when it has none, is the one the detectors need.
    public init(detectors: [any TempoDetector], decoding: DecodingOptions = .standard, timeLimit: Duration? = nil) {
        self.detectors = detectors
        var decoding = decoding
        decoding.minimumSampleRate = decoding.minimumSampleRate ?? Self.neededSampleRate(detectors)
        self.decoding = decoding
        self.timeLimit = timeLimit
    }

    /// The lowest sample rate that loses nothing `detectors` read: the highest rate they
    /// declare, or nil (the song's own rate) when one of them works at the song's rate.
    public static func neededSampleRate(_ detectors: [any TempoDetector]) -> Double? {
        let rates = detectors.map(\.descriptor.analysisSampleRate)
        guard !rates.isEmpty, !rates.contains(where: { $0 == nil }) else { return nil }
        return rates.compactMap { $0 }.max()
    }

    /// Every built-in detector with its default parameters.
    public static func builtin() -> SongAnalyzer {
        // The defaults of a registered detector always validate.
        SongAnalyzer(detectors: BuiltinDetectors.registry.names.compactMap { try? BuiltinDetectors.registry.make($0) })
    }

    /// Hashes and decodes `source`, runs the detectors, and returns what they found (or why the
    /// song could not be analysed). A caller that knows the song's id (a worker, told it by its
    /// JOB) passes it as `song`, and the bytes are not hashed again.
    public func analyze(_ source: AudioSource, song knownID: SongID? = nil) -> SongAnalysis {
        let clock = ContinuousClock()
        let began = clock.now
        let song: SongID
        let stream: AudioStream
        do throws(AudioError) {
            if let knownID {
                song = knownID
            } else {
                song = try SongID(of: source)
            }
            stream = try AudioStream(source, options: decoding)
        } catch {
            return SongAnalysis(file: source.name, error: AnalysisProblem(error))
        }
        guard stream.sampleRate > 0 else {
            return SongAnalysis(
                file: source.name, song: song, metadata: stream.metadata,
                error: AnalysisProblem(code: .corrupt, message: "\(source.name): the stream has no sample rate"))
        }
        // The stream's blocks are finite already: its down-mix clamps every sample to [-1, 1]
        // and turns NaN into silence.
        let run = Run(detectors: detectors, format: SignalFormat(
            sampleRate: Double(stream.sampleRate), expectedFrames: stream.expectedFrames, samplesAreFinite: true))
        // The song is decoded on another thread while the detectors read the blocks before
        // (unless the decoding options say otherwise).
        let decoded = ReadAheadStream(stream, threaded: decoding.readAhead)
        let deadline = timeLimit.map { began + $0 }
        do throws(AudioError) {
            while try decoded.readBlock(before: deadline, { run.consume($0) }) != .ended {
                if let deadline, let timeLimit, clock.now >= deadline {
                    return SongAnalysis(
                        file: source.name, song: song, metadata: decoded.metadata,
                        error: .timeLimitExceeded(source.name, limit: timeLimit, reached: run.seconds))
                }
            }
        } catch {
            return SongAnalysis(file: source.name, song: song, metadata: decoded.metadata, error: AnalysisProblem(error))
        }
        let output = run.finish(advisory: advisory)
        return SongAnalysis(
            file: source.name, song: song, metadata: decoded.metadata, analyses: output.analyses, envelope: output.envelope,
            beatGrid: output.beatGrid, consensus: output.consensus, warnings: decoded.warnings.map(AnalysisProblem.init),
            decodeSeconds: decoded.decodingSeconds, advisory: advisory)
    }

    /// Runs the detectors over samples already in memory (mono, in [-1, 1]), in blocks of
    /// `blockSize`, as ``analyze(_:)`` does after decoding.
    public func analyze(samples: [Float], sampleRate: Double, blockSize: Int = 4096) -> Output {
        let run = Run(detectors: detectors, format: SignalFormat(sampleRate: sampleRate, expectedFrames: samples.count))
        samples.forEachBlock(of: max(blockSize, 1)) { run.consume($0) }
        return run.finish(advisory: advisory)
    }

    /// The advisory detectors among ``detectors``: they do not vote in the consensus.
    public var advisory: Set<String> { Set(detectors.map(\.descriptor).filter(\.advisory).map(\.name)) }

    /// What the detectors found in one song, with the song's energy envelope and beat grid.
    public struct Output: Sendable {
        /// One analysis per detector, in the order the detectors were given; a beat tracker's
        /// beats at the consensus tempo when its own tempo is another.
        public var analyses: [TempoAnalysis]
        public var envelope: EnergyEnvelope
        /// The detectors' consensus (``Consensus/of(_:tolerance:advisory:)``, the advisory ones not voting).
        public var consensus: ConsensusTempo
        /// The constant grid of the voting detectors' consensus tempo (``BeatGridFit``), or nil
        /// when they found no tempo or the song shows no clear beat at it.
        public var beatGrid: BeatGrid?
    }

    /// One song in progress: a session per detector with its running time, and the envelope.
    private final class Run {
        private let detectors: [any TempoDetector]
        private let sessions: [any DetectorSession]
        private var nanoseconds: [UInt64]
        private let energy: BlockEnergyAccumulator
        /// The onsets the beat grid is fitted on, from the spectral frames the detectors share.
        private let onsets: OnsetStrengthAccumulator
        /// Turns NaN and infinite samples to silence before anything sees them (unless the
        /// format says they are finite already).
        private var finite: FiniteSamples
        private let sampleRate: Double
        private var frames = 0

        /// `format`'s samples are made finite here (unless it says they are), once for every
        /// session (which are told so).
        init(detectors: [any TempoDetector], format: SignalFormat) {
            finite = FiniteSamples(format: format)
            let format = SignalFormat(sampleRate: format.sampleRate, expectedFrames: format.expectedFrames, samplesAreFinite: true)
            self.detectors = detectors
            var nanoseconds: [UInt64] = []
            // The detectors' common front ends (a spectrogram with the same frames) are
            // computed once for the song.
            let frontEnds = SharedFrontEnds()
            sessions = detectors.map { detector in
                let start = DispatchTime.now().uptimeNanoseconds
                let session = detector.makeSession(format: format, frontEnds: frontEnds)
                nanoseconds.append(DispatchTime.now().uptimeNanoseconds - start)
                return session
            }
            self.nanoseconds = nanoseconds
            energy = BlockEnergyAccumulator(sampleRate: format.sampleRate)
            onsets = OnsetStrengthAccumulator(
                sampleRate: format.sampleRate, configuration: BeatGridFit.configuration, frontEnds: frontEnds,
                expectedSamples: format.expectedFrames)
            sampleRate = format.sampleRate
        }

        /// Seconds of audio consumed so far.
        var seconds: Double { Double(frames) / sampleRate }

        func consume(_ block: UnsafeBufferPointer<Float>) {
            frames += block.count
            finite.process(block) { clean in
                energy.consume(clean)
                onsets.consume(clean)
                // One clock reading between sessions: each one's end is the next one's start.
                var start = DispatchTime.now().uptimeNanoseconds
                for (index, session) in sessions.enumerated() {
                    session.consume(clean)
                    let end = DispatchTime.now().uptimeNanoseconds
                    nanoseconds[index] += end - start
                    start = end
                }
            }
        }

        func finish(advisory: Set<String>) -> Output {
            var analyses = zip(detectors, sessions).enumerated().map { index, pair in
                let start = DispatchTime.now().uptimeNanoseconds
                let output = pair.1.finish()
                let total = nanoseconds[index] + DispatchTime.now().uptimeNanoseconds - start
                return TempoAnalysis(
                    descriptor: pair.0.descriptor, params: pair.0.parameters, output: output, seconds: Double(total) / 1e9)
            }
            let onsets = self.onsets.finish()
            let consensus = Consensus.of(analyses, advisory: advisory)
            if let bpm = consensus.bpm { retrack(&analyses, near: bpm) }
            return Output(
                analyses: analyses, envelope: EnergyEnvelope(hopS: energy.hopSeconds, values: energy.finish()), consensus: consensus,
                beatGrid: consensus.bpm.flatMap { BeatGridFit.fit(onsets, bpm: $0) })
        }

        /// The beats of the detectors that track them (``BeatTrackingSession``), tracked again
        /// around the consensus tempo `bpm` where the detector's own tempo is another (most
        /// often another metrical level: the consensus's is more often right than one
        /// detector's), the time it takes added to the detector's.
        private func retrack(_ analyses: inout [TempoAnalysis], near bpm: Double) {
            for (index, session) in sessions.enumerated() {
                guard let tracker = session as? any BeatTrackingSession, analyses[index].beats != nil,
                      !(analyses[index].bpm.map { TempoRelation.matches($0, bpm) } ?? false) else { continue }
                let start = DispatchTime.now().uptimeNanoseconds
                analyses[index].beats = tracker.beats(near: bpm)
                analyses[index].seconds += Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            }
        }
    }
}
