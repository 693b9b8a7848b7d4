/// The format of the signal a detector session receives: mono 32-bit float samples in [-1, 1].
public struct SignalFormat: Sendable, Hashable {
    public let sampleRate: Double
    /// The number of samples the decoder expects to deliver, when it knows (it usually does).
    /// Sessions that need a position relative to the whole song (the middle excerpt of the
    /// classic comb filter) use it; they must still cope with fewer or more samples.
    public let expectedFrames: Int?

    public init(sampleRate: Double, expectedFrames: Int?) {
        self.sampleRate = sampleRate
        self.expectedFrames = expectedFrames
    }
}

/// A tempo detector: a named, versioned algorithm with declared parameters.
///
/// A detector value holds validated parameters and is immutable; it makes one
/// ``DetectorSession`` per song. The lifecycle is aubio's: create (``init(parameters:)``),
/// process (``DetectorSession/consume(_:)`` for each block), finish.
public protocol TempoDetector: Sendable {
    /// The detector's name, version, description and parameter declarations.
    static var descriptor: DetectorDescriptor { get }

    /// Creates the detector from a complete set, as returned by ``DetectorDescriptor/resolve(_:)``.
    /// Throws when values are individually valid but inconsistent together.
    init(parameters: ParameterSet) throws(ParameterError)

    /// The complete parameters this detector runs with.
    var parameters: ParameterSet { get }

    /// Starts the analysis of one song.
    func makeSession(format: SignalFormat) -> any DetectorSession
}

/// The analysis of one song in progress. Not thread-safe: one song, one thread.
///
/// Blocks arrive in order and may have any length; a session keeps bounded state (envelopes
/// at a reduced rate, running sums), never the whole signal at its full rate.
public protocol DetectorSession: AnyObject {
    /// Takes the next block of samples.
    func consume(_ samples: UnsafeBufferPointer<Float>)
    /// Ends the song and returns what was found.
    func finish() -> DetectorOutput
}

extension TempoDetector {
    /// The descriptor of this detector's type.
    public var descriptor: DetectorDescriptor { Self.descriptor }

    /// Analyses a whole signal held in memory, feeding it in blocks of `blockSize` samples.
    public func analyze(_ samples: [Float], sampleRate: Double, blockSize: Int = 4096) -> DetectorOutput {
        let session = makeSession(format: SignalFormat(sampleRate: sampleRate, expectedFrames: samples.count))
        samples.withUnsafeBufferPointer { all in
            var start = 0
            while start < all.count {
                let end = min(start + blockSize, all.count)
                session.consume(UnsafeBufferPointer(rebasing: all[start..<end]))
                start = end
            }
        }
        return session.finish()
    }
}
