import CSoxr

/// Converts a stream of mono samples from one sample rate to another with libsoxr.
///
/// The quality is declared, not tuned here: ``Quality-swift.enum``'s cases are libsoxr's own
/// recipes, linear phase (every frequency delayed alike, so onsets keep their relative timing).
/// The output is aligned with the input: libsoxr removes its filter's delay, so output
/// sample `m` is the signal at time `m / outputRate`, and after ``finish(_:)`` the output has
/// `round(inputCount * outputRate / inputRate)` samples. The output buffer is allocated once;
/// input of any block length is taken in pieces that fit it.
///
/// ```swift
/// let resampler = try Resampler(inputRate: 44_100, outputRate: 22_050)
/// resampler.process(block) { resampled in spectrogram.consume(resampled) }
/// resampler.finish { rest in spectrogram.consume(rest) }
/// ```
///
/// Not thread-safe: one stream, one thread.
public final class Resampler {
    /// libsoxr's quality recipes (its `soxr_quality_spec`), linear phase.
    public enum Quality: Sendable, Hashable {
        /// `SOXR_HQ`: 20-bit precision, pass band to 91.3 % of the lower Nyquist frequency,
        /// stop band from it. libsoxr's default and the one Tactus uses.
        case high
        /// `SOXR_VHQ`: 28-bit precision, same bands, more taps.
        case veryHigh

        var recipe: UInt {
            switch self {
            case .high: UInt(SOXR_HQ)
            case .veryHigh: UInt(SOXR_VHQ)
            }
        }
    }

    /// Why libsoxr refused to resample.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    public let inputRate: Double
    public let outputRate: Double
    public let quality: Quality
    private let soxr: soxr_t
    /// Samples per call to libsoxr, and the output buffer's size in input samples.
    private let pieceLength = 8192
    private let output: UnsafeMutableBufferPointer<Float>
    private var finished = false

    /// A resampler from `inputRate` to `outputRate` (each in 1...1_000_000 Hz).
    public init(inputRate: Double, outputRate: Double, quality: Quality = .high) throws(Failure) {
        guard (1...1_000_000).contains(inputRate), (1...1_000_000).contains(outputRate) else {
            throw Failure(description: "cannot resample from \(inputRate) Hz to \(outputRate) Hz")
        }
        self.inputRate = inputRate
        self.outputRate = outputRate
        self.quality = quality
        var ioSpec = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I)
        var qualitySpec = soxr_quality_spec(quality.recipe, UInt(SOXR_LINEAR_PHASE))
        var runtimeSpec = soxr_runtime_spec(1)
        var error: soxr_error_t?
        let made = soxr_create(inputRate, outputRate, 1, &error, &ioSpec, &qualitySpec, &runtimeSpec)
        guard let made, error == nil else {
            if let made { soxr_delete(made) }
            throw Failure(description: "libsoxr: \(error.map { String(cString: $0) } ?? "could not start")")
        }
        soxr = made
        // A piece of input yields at most this many outputs, plus what libsoxr held back.
        let capacity = Int((Double(pieceLength) * outputRate / inputRate).rounded(.up)) + 4096
        output = .allocate(capacity: capacity)
    }

    deinit {
        soxr_delete(soxr)
        output.deallocate()
    }

    /// Takes `samples` and calls `body` with the output they complete (possibly none; the
    /// buffer is valid only inside `body`).
    public func process(_ samples: UnsafeBufferPointer<Float>, _ body: (UnsafeBufferPointer<Float>) -> Void) {
        precondition(!finished, "process after finish")
        var offset = 0
        while offset < samples.count {
            let count = min(pieceLength, samples.count - offset)
            var used = 0
            let produced = run(samples.baseAddress! + offset, count: count, used: &used)
            if produced > 0 { body(UnsafeBufferPointer(rebasing: output[0..<produced])) }
            precondition(used > 0 || produced > 0, "libsoxr took no input and gave no output")
            offset += used
        }
    }

    /// Ends the input and calls `body` with the rest of the output. Later calls do nothing.
    public func finish(_ body: (UnsafeBufferPointer<Float>) -> Void) {
        guard !finished else { return }
        finished = true
        while true {
            var used = 0
            let produced = run(nil, count: 0, used: &used)
            guard produced > 0 else { break }
            body(UnsafeBufferPointer(rebasing: output[0..<produced]))
        }
    }

    /// One call to libsoxr: returns the number of output samples; `used` the input taken.
    private func run(_ input: UnsafePointer<Float>?, count: Int, used: inout Int) -> Int {
        var inputDone = 0, outputDone = 0
        // The buffers are ours and the parameters valid: libsoxr fails here only on memory.
        let error = soxr_process(soxr, input, count, &inputDone, output.baseAddress, output.count, &outputDone)
        precondition(error == nil, "libsoxr: \(String(cString: error!))")
        used = inputDone
        return outputDone
    }
}
