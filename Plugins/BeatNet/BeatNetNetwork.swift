import CBeatNetWeights
import Foundation

/// BeatNet's network (`BDA` in BeatNet's `model.py`) with the trained weights of its model 1,
/// run on the CPU through OpenBLAS (``OpenBLAS``, loaded by the first network).
///
/// Per frame of 272 features: a 1-D convolution (2 channels, kernel 10) along the feature
/// axis, ReLU, max-pooling by 2, a fully connected layer to 150, then two unidirectional LSTM
/// layers of 150 cells over the frames, and a fully connected layer to 3 outputs whose softmax
/// is P(beat), P(downbeat), P(no beat). The network is causal: ``run(_:frames:into:)`` carries
/// the LSTM state from one call to the next, so a song can be fed in chunks; the products over
/// a chunk are matrix products (`cblas_sgemm`), the recurrences one `cblas_sgemv` per frame.
///
/// Every buffer is allocated once, for chunks of at most ``chunkFrames`` frames.
final class BeatNetNetwork {
    static let inputWidth = 272
    static let outputWidth = 3
    static let cells = 150
    private static let kernel = 10
    private static let channels = 2
    /// Convolution outputs per channel after pooling: (272 - 10 + 1) / 2.
    private static let pooled = (inputWidth - kernel + 1) / 2
    private static let hiddenIn = channels * pooled  // 262
    private static let gates = 4 * cells

    let chunkFrames: Int
    private let weights: Weights
    private let blas: OpenBLAS
    /// Working memory, allocated once: the pooled convolution (chunk x 262), the first fully
    /// connected layer (chunk x 150), the gate pre-activations (chunk x 600), each LSTM layer's
    /// output (chunk x 150) and state (h and c, 150 each).
    private let pooledInput: UnsafeMutablePointer<Float>
    private let hidden0: UnsafeMutablePointer<Float>
    private let gateInput: UnsafeMutablePointer<Float>
    private let layerOutput: [UnsafeMutablePointer<Float>]
    private let hState: [UnsafeMutablePointer<Float>]
    private let cState: [UnsafeMutablePointer<Float>]

    /// The weights, views into the embedded float32 data (see Sources/CBeatNetWeights/README.md),
    /// except each LSTM layer's recurrent weights, which are held transposed (``cells`` rows of
    /// ``gates``): OpenBLAS's `sgemv` of a transposed row-major matrix (the axpy form, one row
    /// of gates per cell) takes 5 µs against 8 µs for the embedded layout, and the
    /// recurrence is two such products per frame.
    /// Sendable although it holds pointers: they point into the binary's read-only data, or into
    /// memory written once when the weights are first used and read only after.
    struct Weights: @unchecked Sendable {
        let convWeight: UnsafePointer<Float>
        let convBias: UnsafePointer<Float>
        let linear0Weight: UnsafePointer<Float>
        let linear0Bias: UnsafePointer<Float>
        let lstm: [(inputWeight: UnsafePointer<Float>, hiddenWeightTransposed: UnsafePointer<Float>, bias: [Float])]
        let outputWeight: UnsafePointer<Float>
        let outputBias: UnsafePointer<Float>

        /// Slices the embedded data in the converter's order; stops the process if the
        /// embedded file does not have the expected size (a broken build, not bad input).
        static let embedded: Weights = {
            let count = tactus_beatnet_weight_count()
            var cursor = tactus_beatnet_weights()!
            func take(_ n: Int) -> UnsafePointer<Float> {
                defer { cursor += n }
                return cursor
            }
            let convWeight = take(channels * kernel), convBias = take(channels)
            let linear0Weight = take(cells * hiddenIn), linear0Bias = take(cells)
            var lstm: [(UnsafePointer<Float>, UnsafePointer<Float>, [Float])] = []
            for _ in 0..<2 {
                let inputWeight = take(gates * cells), hiddenWeight = take(gates * cells)
                let inputBias = take(gates), hiddenBias = take(gates)
                // Allocated once for the process's lifetime, as the embedded data is.
                let transposed = UnsafeMutablePointer<Float>.allocate(capacity: gates * cells)
                for gate in 0..<gates {
                    for cell in 0..<cells {
                        transposed[cell * gates + gate] = hiddenWeight[gate * cells + cell]
                    }
                }
                // PyTorch adds both biases; so does every frame here, once.
                lstm.append((inputWeight, UnsafePointer(transposed), (0..<gates).map { inputBias[$0] + hiddenBias[$0] }))
            }
            let outputWeight = take(outputWidth * cells), outputBias = take(outputWidth)
            let used = cursor - tactus_beatnet_weights()!
            precondition(used == count, "the embedded BeatNet weights hold \(count) values, the network needs \(used)")
            return Weights(
                convWeight: convWeight, convBias: convBias, linear0Weight: linear0Weight, linear0Bias: linear0Bias,
                lstm: lstm.map { (inputWeight: $0.0, hiddenWeightTransposed: $0.1, bias: $0.2) },
                outputWeight: outputWeight, outputBias: outputBias)
        }()
    }

    /// Throws when OpenBLAS cannot be loaded.
    init(chunkFrames: Int = 256) throws(OpenBLAS.LoadFailure) {
        precondition(chunkFrames > 0)
        blas = try OpenBLAS.shared.get()
        self.chunkFrames = chunkFrames
        weights = .embedded
        func zeros(_ count: Int) -> UnsafeMutablePointer<Float> {
            let pointer = UnsafeMutablePointer<Float>.allocate(capacity: count)
            pointer.initialize(repeating: 0, count: count)
            return pointer
        }
        pooledInput = zeros(chunkFrames * Self.hiddenIn)
        hidden0 = zeros(chunkFrames * Self.cells)
        gateInput = zeros(chunkFrames * Self.gates)
        layerOutput = [zeros(chunkFrames * Self.cells), zeros(chunkFrames * Self.cells)]
        hState = [zeros(Self.cells), zeros(Self.cells)]
        cState = [zeros(Self.cells), zeros(Self.cells)]
    }

    deinit {
        for pointer in [pooledInput, hidden0, gateInput] + layerOutput + hState + cState {
            pointer.deallocate()
        }
    }

    /// Starts a new song: the LSTM state back to zeros.
    func reset() {
        for pointer in hState + cState {
            pointer.update(repeating: 0, count: Self.cells)
        }
    }

    /// Runs `frames` frames of ``inputWidth`` features (row-major) through the network and
    /// writes ``outputWidth`` probabilities per frame into `output`. `frames` is at most
    /// ``chunkFrames``.
    func run(_ input: UnsafePointer<Float>, frames: Int, into output: UnsafeMutablePointer<Float>) {
        precondition(frames >= 0 && frames <= chunkFrames)
        guard frames > 0 else { return }
        convolve(input, frames: frames)
        let n = Int32(frames)
        // linear0: hidden0 = pooled · W0ᵀ + b0
        for frame in 0..<frames {
            (hidden0 + frame * Self.cells).update(from: weights.linear0Bias, count: Self.cells)
        }
        blas.sgemm(
            OpenBLAS.rowMajor, OpenBLAS.noTranspose, OpenBLAS.transpose, n, Int32(Self.cells), Int32(Self.hiddenIn),
            1, pooledInput, Int32(Self.hiddenIn), weights.linear0Weight, Int32(Self.hiddenIn), 1, hidden0, Int32(Self.cells))
        lstm(layer: 0, input: hidden0, frames: frames)
        lstm(layer: 1, input: layerOutput[0], frames: frames)
        // The output layer and the softmax over the three classes.
        for frame in 0..<frames {
            (output + frame * Self.outputWidth).update(from: weights.outputBias, count: Self.outputWidth)
        }
        blas.sgemm(
            OpenBLAS.rowMajor, OpenBLAS.noTranspose, OpenBLAS.transpose, n, Int32(Self.outputWidth), Int32(Self.cells),
            1, layerOutput[1], Int32(Self.cells), weights.outputWeight, Int32(Self.cells), 1, output, Int32(Self.outputWidth))
        for frame in 0..<frames {
            let row = output + frame * Self.outputWidth
            let largest = max(row[0], row[1], row[2])
            var total: Float = 0
            for k in 0..<Self.outputWidth {
                row[k] = exp(row[k] - largest)
                total += row[k]
            }
            for k in 0..<Self.outputWidth {
                row[k] /= total
            }
        }
    }

    /// conv1 (1 → 2 channels, kernel 10, no padding), ReLU and max-pooling by 2 of each frame,
    /// flattened channel by channel into ``pooledInput``.
    private func convolve(_ input: UnsafePointer<Float>, frames: Int) {
        do {
            for frame in 0..<frames {
                let x = input + frame * Self.inputWidth
                let out = pooledInput + frame * Self.hiddenIn
                for channel in 0..<Self.channels {
                    let w = weights.convWeight + channel * Self.kernel
                    let bias = weights.convBias[channel]
                    for position in 0..<Self.pooled {
                        var best: Float = 0  // ReLU: max(0, a, b) = max over ReLU(a), ReLU(b)
                        for step in 0..<2 {
                            let base = x + 2 * position + step
                            var sum = bias
                            for k in 0..<Self.kernel {
                                sum += w[k] * base[k]
                            }
                            best = max(best, sum)
                        }
                        out[channel * Self.pooled + position] = best
                    }
                }
            }
        }
    }

    /// One LSTM layer over `frames` frames of ``cells`` inputs: the input projections of all
    /// frames in one product, then the recurrence frame by frame (PyTorch's gate order: input,
    /// forget, cell, output).
    private func lstm(layer: Int, input: UnsafePointer<Float>, frames: Int) {
        let parameters = weights.lstm[layer]
        let cells = Self.cells, gates = Self.gates
        let h = hState[layer], c = cState[layer], out = layerOutput[layer], g = gateInput
        parameters.bias.withUnsafeBufferPointer { bias in
            for frame in 0..<frames {
                (g + frame * gates).update(from: bias.baseAddress!, count: gates)
            }
        }
        blas.sgemm(
            OpenBLAS.rowMajor, OpenBLAS.noTranspose, OpenBLAS.transpose, Int32(frames), Int32(gates), Int32(cells),
            1, input, Int32(cells), parameters.inputWeight, Int32(cells), 1, g, Int32(gates))
        for frame in 0..<frames {
            let z = g + frame * gates
            blas.sgemv(
                OpenBLAS.rowMajor, OpenBLAS.transpose, Int32(cells), Int32(gates), 1, parameters.hiddenWeightTransposed, Int32(gates),
                h, 1, 1, z, 1)
            Self.updateCells(z, c: c, h: h)
            (out + frame * cells).update(from: h, count: cells)
        }
    }

    /// The LSTM cell update from the gate pre-activations `z` (input, forget, cell and output
    /// gates, ``cells`` each): c = f c + i g, h = o tanh(c), eight cells at a time
    /// (``VectorMath``), the last 150 mod 8 cells one by one.
    @inline(__always)
    private static func updateCells(_ z: UnsafeMutablePointer<Float>, c: UnsafeMutablePointer<Float>, h: UnsafeMutablePointer<Float>) {
        let cells = Self.cells
        let zRaw = UnsafeRawPointer(z), cRaw = UnsafeMutableRawPointer(c), hRaw = UnsafeMutableRawPointer(h)
        var cell = 0
        while cell + 8 <= cells {
            let offset = 4 * cell
            let inputGate = VectorMath.sigmoid(zRaw.loadUnaligned(fromByteOffset: offset, as: SIMD8<Float>.self))
            let forgetGate = VectorMath.sigmoid(zRaw.loadUnaligned(fromByteOffset: offset + 4 * cells, as: SIMD8<Float>.self))
            let candidate = VectorMath.tanh(zRaw.loadUnaligned(fromByteOffset: offset + 8 * cells, as: SIMD8<Float>.self))
            let outputGate = VectorMath.sigmoid(zRaw.loadUnaligned(fromByteOffset: offset + 12 * cells, as: SIMD8<Float>.self))
            let state = forgetGate * cRaw.loadUnaligned(fromByteOffset: offset, as: SIMD8<Float>.self) + inputGate * candidate
            cRaw.storeBytes(of: state, toByteOffset: offset, as: SIMD8<Float>.self)
            hRaw.storeBytes(of: outputGate * VectorMath.tanh(state), toByteOffset: offset, as: SIMD8<Float>.self)
            cell += 8
        }
        while cell < cells {
            let gates = SIMD4(z[cell], z[cells + cell], z[3 * cells + cell], 0)
            let sigmoids = VectorMath.sigmoid(SIMD8(lowHalf: gates, highHalf: .zero))
            let candidate = VectorMath.tanh(SIMD8(repeating: z[2 * cells + cell]))[0]
            c[cell] = sigmoids[1] * c[cell] + sigmoids[0] * candidate
            h[cell] = sigmoids[2] * VectorMath.tanh(SIMD8(repeating: c[cell]))[0]
            cell += 1
        }
    }
}
