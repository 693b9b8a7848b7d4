/// A song resampled to the rate a detector's front end works at (``Resampler``, libsoxr),
/// computed once for every session of the song that needs that rate: detectors that declare
/// the same ``TactusDetector/DetectorDescriptor/analysisSampleRate`` take it from the song's
/// ``TactusDetector/SharedFrontEnds`` under the same ``Key``.
///
/// Each listener is called with the resampled signal, block by block, in order. Several
/// owners may feed the same blocks of the song: ``consume(_:at:)`` takes a block by its
/// position in the song and ignores what it has already taken, so the song is resampled
/// once however many owners feed it. At the same rate in and out, the samples pass through
/// unchanged.
///
/// ```swift
/// let signal = frontEnds.shared(ResampledSignal.Key(inputRate: 44_100, outputRate: 22_050)) {
///     ResampledSignal(key: $0)
/// }
/// signal.listen { block in spectrogram.consume(block) }
/// signal.consume(block, at: position)
/// signal.finish()
/// ```
///
/// One song, one thread, like the sessions that share it.
public final class ResampledSignal {
    /// What defines the signal: two owners with equal keys can share it.
    public struct Key: Hashable, Sendable {
        public var inputRate: Double
        public var outputRate: Double
        public var quality: Resampler.Quality

        public init(inputRate: Double, outputRate: Double, quality: Resampler.Quality = .high) {
            self.inputRate = inputRate
            self.outputRate = outputRate
            self.quality = quality
        }
    }

    public let key: Key
    /// Nil when the rates are equal (or libsoxr refused them).
    private let resampler: Resampler?
    /// Why the song cannot be resampled between the key's rates (libsoxr refused them); the
    /// listeners then get nothing.
    public let failure: Resampler.Failure?
    private var listeners: [(UnsafeBufferPointer<Float>) -> Void] = []
    /// Input samples taken so far.
    public private(set) var consumed = 0
    private var finished = false

    public init(key: Key) {
        self.key = key
        do throws(Resampler.Failure) {
            resampler = key.inputRate == key.outputRate
                ? nil : try Resampler(inputRate: key.inputRate, outputRate: key.outputRate, quality: key.quality)
            failure = nil
        } catch {
            resampler = nil
            failure = error
        }
    }

    /// Adds a listener, called with each resampled block; before any audio is fed.
    public func listen(_ listener: @escaping (UnsafeBufferPointer<Float>) -> Void) {
        precondition(consumed == 0, "listen before the first samples")
        listeners.append(listener)
    }

    /// Takes the song's samples from `position` on (at the input rate); those already taken
    /// are skipped.
    public func consume(_ samples: UnsafeBufferPointer<Float>, at position: Int) {
        let end = position + samples.count
        guard !finished, failure == nil, end > consumed, position <= consumed else { return }
        let new = UnsafeBufferPointer(rebasing: samples[(consumed - position)...])
        consumed = end
        if let resampler {
            resampler.process(new, hand)
        } else {
            hand(new)
        }
    }

    /// Ends the song: the resampler's last samples go to the listeners. Later calls do nothing.
    public func finish() {
        guard !finished else { return }
        finished = true
        resampler?.finish(hand)
    }

    private func hand(_ block: UnsafeBufferPointer<Float>) {
        for listener in listeners { listener(block) }
    }
}
