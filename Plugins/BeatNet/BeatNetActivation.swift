import Foundation

/// BeatNet's input features and network over a whole song's filtered magnitudes.
///
/// The features of a frame are madmom's `LogarithmicSpectrogram(mul=1, add=1)` of the filtered
/// magnitudes, `log10(1 + gain * m)`, followed by their `SpectrogramDifference(diff_ratio=0.5,
/// positive_diffs=True)`: the rise from the previous frame, negative rises set to 0, and 0 for
/// the first frame (a 1411-sample Hann window and a 441-sample hop make madmom's `diff_frames`
/// 1). `gain` scales the audio's level (``BeatNetSession`` normalises it); 1 is BeatNet's own
/// input.
///
/// The features are made and run through ``BeatNetNetwork`` one chunk of frames at a time, so
/// memory beyond the magnitudes and the activation is fixed.
final class BeatNetActivation {
    let network: BeatNetNetwork
    let bandCount: Int
    private var features: [Float]
    private var previous: [Float]

    /// With a network of its own; throws when OpenBLAS cannot be loaded.
    convenience init(bandCount: Int) throws(OpenBLAS.LoadFailure) {
        self.init(bandCount: bandCount, network: try BeatNetNetwork())
    }

    init(bandCount: Int, network: BeatNetNetwork) {
        precondition(2 * bandCount == BeatNetNetwork.inputWidth, "BeatNet reads 136 bands and their differences")
        self.bandCount = bandCount
        self.network = network
        features = [Float](repeating: 0, count: network.chunkFrames * BeatNetNetwork.inputWidth)
        previous = [Float](repeating: 0, count: bandCount)
    }

    /// The spectral flux of the frames the last ``activation(magnitudes:gain:)`` read: the sum
    /// of each frame's positive differences (the second half of its features).
    private(set) var flux: [Float] = []

    /// The activation of `frames` frames of ``bandCount`` magnitudes: ``BeatNetNetwork/outputWidth``
    /// probabilities per frame, row-major.
    func activation(magnitudes: UnsafeBufferPointer<Float>, gain: Float) -> [Float] {
        let frames = magnitudes.count / bandCount
        var output = [Float](repeating: 0, count: frames * BeatNetNetwork.outputWidth)
        flux = [Float](repeating: 0, count: frames)
        network.reset()
        output.withUnsafeMutableBufferPointer { output in
            flux.withUnsafeMutableBufferPointer { flux in
                features.withUnsafeMutableBufferPointer { buffer in
                    var first = 0
                    while first < frames {
                        let count = min(network.chunkFrames, frames - first)
                        makeFeatures(
                            magnitudes: magnitudes, frames: first..<(first + count), gain: gain, into: buffer.baseAddress!,
                            flux: flux.baseAddress! + first)
                        network.run(buffer.baseAddress!, frames: count, into: output.baseAddress! + first * BeatNetNetwork.outputWidth)
                        first += count
                    }
                }
            }
        }
        return output
    }

    /// Writes the features of `frames` (each ``BeatNetNetwork/inputWidth`` values: the log
    /// magnitudes, then their positive differences) into `output`, and each frame's spectral
    /// flux (the sum of its differences, band after band) into `flux` when given. Frames must
    /// come in order from frame 0 (the difference needs the previous frame).
    func makeFeatures(
        magnitudes: UnsafeBufferPointer<Float>, frames: Range<Int>, gain: Float, into output: UnsafeMutablePointer<Float>,
        flux: UnsafeMutablePointer<Float>? = nil
    ) {
        let bands = bandCount
        previous.withUnsafeMutableBufferPointer { previous in
            for (row, frame) in frames.enumerated() {
                let features = output + row * BeatNetNetwork.inputWidth
                let source = magnitudes.baseAddress! + frame * bands
                var sum: Float = 0
                for band in 0..<bands {
                    let value = log10(1 + gain * source[band])
                    let rise = frame == 0 ? 0 : max(value - previous[band], 0)
                    features[band] = value
                    features[bands + band] = rise
                    previous[band] = value
                    sum += rise
                }
                flux?[row] = sum
            }
        }
    }
}
