/// The format of the signal a detector session receives: mono 32-bit float samples in [-1, 1].
public struct SignalFormat: Sendable, Hashable {
    public let sampleRate: Double
    /// The number of samples the decoder expects to deliver, when it knows (it usually does).
    /// Sessions that need a position relative to the whole song (the middle excerpt of the
    /// classic comb filter) use it; they must still cope with fewer or more samples.
    public let expectedFrames: Int?
    /// True when whoever feeds the session has made every sample finite already (NaN and
    /// infinities turned to silence): ``TactusAnalysis``'s song analyzer does it once for all
    /// the song's detectors, so theirs need not each look at every sample again.
    public let samplesAreFinite: Bool

    public init(sampleRate: Double, expectedFrames: Int?, samplesAreFinite: Bool = false) {
        self.sampleRate = sampleRate
        self.expectedFrames = expectedFrames
        self.samplesAreFinite = samplesAreFinite
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

    /// Starts the analysis of one song analysed by other detectors at the same time, taking
    /// any front end they compute alike from `frontEnds` (a default shares nothing).
    func makeSession(format: SignalFormat, frontEnds: SharedFrontEnds) -> any DetectorSession
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

/// A session whose detector tracks beats, and can track them again once it has finished around
/// a tempo decided elsewhere: the consensus of the song's detectors, whose metrical level is
/// more often right than one detector's (a tracker follows the level of the tempo it is given).
public protocol BeatTrackingSession: DetectorSession {
    /// The beats at tempi around `bpm`, or nil when the song had none to track. Called after
    /// ``DetectorSession/finish()``.
    func beats(near bpm: Double) -> BeatPositions?
}

extension TempoDetector {
    /// The descriptor of this detector's type.
    public var descriptor: DetectorDescriptor { Self.descriptor }

    /// Analyses a whole signal held in memory, feeding it in blocks of `blockSize` samples.
    public func analyze(_ samples: [Float], sampleRate: Double, blockSize: Int = 4096) -> DetectorOutput {
        let session = makeSession(format: SignalFormat(sampleRate: sampleRate, expectedFrames: samples.count))
        samples.forEachBlock(of: blockSize) { session.consume($0) }
        return session.finish()
    }
}

/// The low-level signals of one song that several detectors compute the same way (a
/// spectrogram with the same frames, say), computed once and handed to each: a cache, per
/// song, of objects keyed by what defines them. Detectors' decisions stay their own; only
/// the front end is shared. One song, one thread, like the sessions.
public final class SharedFrontEnds {
    private var values: [AnyHashable: AnyObject] = [:]

    public init() {}

    /// The object kept under `key`, made by `make` the first time it is asked for. A key
    /// must say everything the object depends on (rates, lengths), so that whoever asks with
    /// an equal key can use the object as if it were its own.
    public func shared<Value: AnyObject>(_ key: some Hashable, make: () -> Value) -> Value {
        let key = AnyHashable(key)
        if let value = values[key] as? Value { return value }
        let value = make()
        values[key] = value
        return value
    }
}

extension TempoDetector {
    /// Starts the analysis of one song whose other detectors share `frontEnds`. The default
    /// shares nothing (``makeSession(format:)``); a detector whose front end others may
    /// compute alike takes it from there.
    public func makeSession(format: SignalFormat, frontEnds: SharedFrontEnds) -> any DetectorSession {
        makeSession(format: format)
    }
}
