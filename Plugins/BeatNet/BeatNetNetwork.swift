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
    /// One channel's convolution of one frame, before the pooling (``pooled`` pairs).
    private let convolved: UnsafeMutablePointer<Float>
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
        convolved = zeros(2 * Self.pooled)
        hidden0 = zeros(chunkFrames * Self.cells)
        gateInput = zeros(chunkFrames * Self.gates)
        layerOutput = [zeros(chunkFrames * Self.cells), zeros(chunkFrames * Self.cells)]
        hState = [zeros(Self.cells), zeros(Self.cells)]
        cState = [zeros(Self.cells), zeros(Self.cells)]
    }

    deinit {
        for pointer in [pooledInput, convolved, hidden0, gateInput] + layerOutput + hState + cState {
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
    ///
    /// The convolution's outputs that the pooling reads (``pooled`` pairs) are computed eight
    /// neighbouring outputs at a time into ``convolved``, each the bias plus its ten products
    /// in kernel order, the last few one by one; the pooling then keeps `max(max(0, a), b)` of
    /// each pair. The same sums and comparisons as output by output.
    private func convolve(_ input: UnsafePointer<Float>, frames: Int) {
        typealias Lanes = SIMD8<Float>
        let outputs = 2 * Self.pooled, width = Lanes.scalarCount
        // Whole blocks whose reads stay inside the frame's features.
        let blocked = min(outputs, Self.inputWidth - Self.kernel + 1 - width + 1) / width * width
        let conv = convolved
        for frame in 0..<frames {
            let x = input + frame * Self.inputWidth
            let out = pooledInput + frame * Self.hiddenIn
            for channel in 0..<Self.channels {
                let w = weights.convWeight + channel * Self.kernel
                let bias = weights.convBias[channel]
                var position = 0
                while position < blocked {
                    var sum = Lanes(repeating: bias)
                    for k in 0..<Self.kernel {
                        sum += w[k] * UnsafeRawPointer(x + position + k).loadUnaligned(as: Lanes.self)
                    }
                    UnsafeMutableRawPointer(conv + position).storeBytes(of: sum, as: Lanes.self)
                    position += width
                }
                while position < outputs {
                    var sum = bias
                    for k in 0..<Self.kernel {
                        sum += w[k] * x[position + k]
                    }
                    conv[position] = sum
                    position += 1
                }
                for position in 0..<Self.pooled {
                    // ReLU: max(0, a, b) = max over ReLU(a), ReLU(b)
                    out[channel * Self.pooled + position] = max(max(0, conv[2 * position]), conv[2 * position + 1])
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
    /// (``VectorMath``), the last 150 mod 8 cells as one more group of eight whose spare lanes
    /// are zeros and are not written back.
    @inline(__always)
    private static func updateCells(_ z: UnsafeMutablePointer<Float>, c: UnsafeMutablePointer<Float>, h: UnsafeMutablePointer<Float>) {
        typealias Lanes = SIMD8<Float>
        let cells = Self.cells, width = Lanes.scalarCount
        /// The new cell state and output of eight cells.
        @inline(__always)
        func step(input: Lanes, forget: Lanes, candidate: Lanes, output: Lanes, state: Lanes) -> (state: Lanes, output: Lanes) {
            let state = VectorMath.sigmoid(forget) * state + VectorMath.sigmoid(input) * VectorMath.tanh(candidate)
            return (state, VectorMath.sigmoid(output) * VectorMath.tanh(state))
        }
        var cell = 0
        while cell + width <= cells {
            func load(_ pointer: UnsafePointer<Float>) -> Lanes { UnsafeRawPointer(pointer + cell).loadUnaligned(as: Lanes.self) }
            let new = step(input: load(z), forget: load(z + cells), candidate: load(z + 2 * cells), output: load(z + 3 * cells), state: load(c))
            UnsafeMutableRawPointer(c + cell).storeBytes(of: new.state, as: Lanes.self)
            UnsafeMutableRawPointer(h + cell).storeBytes(of: new.output, as: Lanes.self)
            cell += width
        }
        let rest = cells - cell
        if rest > 0 {
            func load(_ pointer: UnsafePointer<Float>) -> Lanes {
                var lanes = Lanes()
                for lane in 0..<rest { lanes[lane] = pointer[cell + lane] }
                return lanes
            }
            let new = step(input: load(z), forget: load(z + cells), candidate: load(z + 2 * cells), output: load(z + 3 * cells), state: load(c))
            for lane in 0..<rest {
                c[cell + lane] = new.state[lane]
                h[cell + lane] = new.output[lane]
            }
        }
    }
}
