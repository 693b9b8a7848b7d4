import Foundation

/// One analysis window of an ``OnsetStrengthEnvelope``, as a salience function sees it.
public struct EnvelopeWindow {
    /// The window's part of each band envelope (slices of the song's envelopes: indices are
    /// song frame numbers, from `startFrame` to `startFrame + frameCount`).
    public let bands: [ArraySlice<Float>]
    /// Envelope values per second.
    public let frameRate: Double
    /// Index of the window's first frame in the song's envelope.
    public let startFrame: Int
    public var frameCount: Int { bands.first?.count ?? 0 }

    public init(bands: [ArraySlice<Float>], frameRate: Double, startFrame: Int) {
        self.bands = bands
        self.frameRate = frameRate
        self.startFrame = startFrame
    }

    /// The lag, in (fractional) envelope frames, of one beat at `bpm`.
    public func lag(ofBPM bpm: Double) -> Double { 60 * frameRate / bpm }
}
