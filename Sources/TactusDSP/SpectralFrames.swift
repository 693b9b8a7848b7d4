import Foundation

/// Short-time spectra of a song: Hann-windowed frames of ``frameSeconds`` every
/// `1 / frameRate` seconds, transformed with FFTW, computed once for every listener that
/// uses the same frames (``OnsetStrengthAccumulator``s of several detectors).
///
/// Each listener is called with every frame's spectrum (interleaved real and imaginary
/// parts, `fftSize / 2 + 1` bins) in order. The signal's energy between frame starts is
/// summed on the way (``energyPrefix``), for the listeners' window energies: each hop whole,
/// once its last sample has come, so the sums do not depend on how the song was cut into
/// blocks. Several owners
/// may feed the same blocks of the song: ``consume(_:at:)`` takes a block by its position in
/// the song and ignores what it has already taken, so the frames are transformed once however
/// many owners feed them.
///
/// ```swift
/// let frames = SpectralFrames(key: SpectralFrames.Key(sampleRate: 44_100, frameRate: 100, frameSeconds: 0.0232))
/// frames.listen { spectrum in /* band powers of one frame */ }
/// frames.consume(block, at: 0)
/// frames.finish()
/// ```
public final class SpectralFrames {
    /// What defines the frames: two owners with equal keys can share them.
    public struct Key: Hashable, Sendable {
        public var sampleRate: Double
        public var frameRate: Double
        public var frameSeconds: Double

        public init(sampleRate: Double, frameRate: Double, frameSeconds: Double) {
            self.sampleRate = sampleRate
            self.frameRate = frameRate
            self.frameSeconds = frameSeconds
        }
    }

    public let key: Key
    /// Samples per frame, and the transform's size (at least that).
    public let frameLength: Int
    public let fftSize: Int
    private let fft: RealFFT
    private let window: [Float]
    private var listeners: [(UnsafeBufferPointer<Float>) -> Void] = []

    /// Audio not yet fully used: `pending[0]` is sample `pendingStart` of the song.
    private var pending: [Float] = []
    private var pendingStart = 0
    /// Samples taken so far.
    public private(set) var consumed = 0
    private var nextFrame = 0
    private var finished = false

    /// `energyPrefix[k]` is the sum of the squared samples before the start of frame `k`; once
    /// finished, its last value is the sum over every sample.
    public private(set) var energyPrefix: [Double] = [0]
    /// The first sample of the hop whose energy is summed next, and the first of the next hop.
    private var energyHopStart = 0
    private var nextEnergyBoundary: Int

    public init(key: Key) {
        precondition(key.sampleRate > 0 && key.frameRate > 0 && key.frameSeconds > 0)
        self.key = key
        frameLength = max(16, Int((key.frameSeconds * key.sampleRate).rounded()))
        fftSize = FFTSize.atLeast(frameLength)
        fft = RealFFT(size: fftSize)
        // A periodic Hann window: sums to frameLength / 2.
        let length = frameLength
        window = (0..<length).map { Float(0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(length))) }
        nextEnergyBoundary = max(1, Int((key.sampleRate / key.frameRate).rounded()))
    }

    /// Adds a listener, called with each frame's spectrum; before any audio is fed.
    public func listen(_ listener: @escaping (UnsafeBufferPointer<Float>) -> Void) {
        precondition(consumed == 0, "listen before the first samples")
        listeners.append(listener)
    }

    /// The first sample of frame `frame` (frames start `sampleRate / frameRate` samples apart,
    /// rounded, so the rate is exact on average).
    public func frameStart(_ frame: Int) -> Int {
        Int((Double(frame) * key.sampleRate / key.frameRate).rounded())
    }

    /// Takes the song's samples from `position` on; those already taken are skipped.
    public func consume(_ samples: UnsafeBufferPointer<Float>, at position: Int) {
        let end = position + samples.count
        guard !finished, end > consumed, position <= consumed else { return }
        pending.append(contentsOf: UnsafeBufferPointer(rebasing: samples[(consumed - position)...]))
        consumed = end
        accumulateEnergy()
        processAvailableFrames()
    }

    /// Ends the signal: one frame per hop started before the end (the last zero-padded).
    /// Later calls do nothing.
    public func finish() {
        guard !finished else { return }
        finished = true
        energyPrefix.append(energyPrefix[energyPrefix.count - 1] + hopEnergy(until: consumed))
        pending.append(contentsOf: repeatElement(0, count: frameLength))
        while frameStart(nextFrame) < consumed {
            transform(from: frameStart(nextFrame) - pendingStart)
            nextFrame += 1
        }
        pending = []
    }

    /// Sums the energy of every hop whose last sample has come (they are all in ``pending``).
    private func accumulateEnergy() {
        while nextEnergyBoundary <= consumed {
            energyPrefix.append(energyPrefix[energyPrefix.count - 1] + hopEnergy(until: nextEnergyBoundary))
            energyHopStart = nextEnergyBoundary
            nextEnergyBoundary = frameStart(energyPrefix.count)
            // Guard against a zero-length hop at absurd rates.
            if nextEnergyBoundary <= energyHopStart { nextEnergyBoundary = energyHopStart + 1 }
        }
    }

    /// The sum of the squared samples from ``energyHopStart`` to `end`, in one pass.
    private func hopEnergy(until end: Int) -> Double {
        pending.withUnsafeBufferPointer { Double(SquaredSum.of($0, (energyHopStart - pendingStart)..<(end - pendingStart))) }
    }

    private func processAvailableFrames() {
        while true {
            let start = frameStart(nextFrame)
            guard start + frameLength <= consumed else { break }
            transform(from: start - pendingStart)
            nextFrame += 1
        }
        // Drop audio no future frame or hop energy needs, in large steps to keep removal cheap.
        let keepFrom = min(frameStart(nextFrame), energyHopStart)
        let droppable = keepFrom - pendingStart
        if droppable > 16_384 {
            pending.removeFirst(droppable)
            pendingStart = keepFrom
        }
    }

    /// Windows the frame starting at `pending[offset]`, transforms it and hands the spectrum
    /// to the listeners.
    private func transform(from offset: Int) {
        let input = fft.samples.baseAddress!
        let count = frameLength
        pending.withUnsafeBufferPointer { buffer in
            window.withUnsafeBufferPointer { window in
                multiplyElementwise(buffer.baseAddress! + offset, window.baseAddress!, into: input, count: count)
            }
        }
        (input + count).update(repeating: 0, count: fft.size - count)
        fft.forward()
        fft.spectrum.withMemoryRebound(to: Float.self) { spectrum in
            let floats = UnsafeBufferPointer(spectrum)
            for listener in listeners { listener(floats) }
        }
    }
}
