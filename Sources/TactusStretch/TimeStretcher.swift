import CRubberBand

/// Changes the tempo of audio without changing its pitch, with the Rubber Band Library
/// (C. Cannam, Breakfast Quay), offline: the whole signal is studied first.
public enum TimeStretcher {
    /// Rubber Band's engines.
    public enum Engine: String, Sendable, Hashable, Codable, CaseIterable {
        /// R2: a phase vocoder with phase resets at transients; about 3 times as fast as R3.
        case faster
        /// R3: higher quality, especially for larger changes.
        case finer
    }

    /// `samples` (mono, at `sampleRate` Hz) played `tempoRatio` times as fast: 1.05 is 5 % faster
    /// (and 1/1.05 as long), pitch kept, at `outputRate` Hz (the song's own rate by default:
    /// another rate resamples, through Rubber Band's pitch scale).
    public static func stretch(
        _ samples: [Float], sampleRate: Int, tempoRatio: Double, outputRate: Int? = nil, engine: Engine = .faster
    ) -> [Float] {
        let outputRate = outputRate ?? sampleRate
        precondition(tempoRatio > 0 && tempoRatio.isFinite && sampleRate > 0 && outputRate > 0)
        guard !samples.isEmpty else { return [] }
        let engineOption = engine == .faster ? RubberBandOptionEngineFaster.rawValue : RubberBandOptionEngineFiner.rawValue
        let options = Int32(RubberBandOptionProcessOffline.rawValue | engineOption | RubberBandOptionThreadingNever.rawValue)
        // Played at the output rate, the output's frequencies and length scale by outputRate / sampleRate:
        // the pitch scale and the time ratio make up for it.
        let rateChange = Double(outputRate) / Double(sampleRate)
        guard let state = rubberband_new(UInt32(sampleRate), 1, options, rateChange / tempoRatio, 1 / rateChange)
        else { return [] }
        defer { rubberband_delete(state) }
        rubberband_set_expected_input_duration(state, UInt32(samples.count))
        let block = 16_384
        rubberband_set_max_process_size(state, UInt32(block))
        var output: [Float] = []
        output.reserveCapacity(Int(Double(samples.count) / tempoRatio) + block)
        var retrieved = [Float](repeating: 0, count: block)
        samples.withUnsafeBufferPointer { input in
            for pass in 0..<2 {
                var start = 0
                while start < input.count {
                    let count = min(block, input.count - start)
                    let final: Int32 = start + count == input.count ? 1 : 0
                    var channel: UnsafePointer<Float>? = input.baseAddress! + start
                    withUnsafePointer(to: &channel) { channels in
                        if pass == 0 {
                            rubberband_study(state, channels, UInt32(count), final)
                        } else {
                            rubberband_process(state, channels, UInt32(count), final)
                        }
                    }
                    if pass == 1 { drain(state, into: &output, buffer: &retrieved) }
                    start += count
                }
            }
        }
        drain(state, into: &output, buffer: &retrieved)
        return output
    }

    /// Moves every sample the stretcher has ready into `output`.
    private static func drain(_ state: RubberBandState, into output: inout [Float], buffer: inout [Float]) {
        while true {
            let available = Int(rubberband_available(state))
            guard available > 0 else { return }
            let count = buffer.withUnsafeMutableBufferPointer { pointer -> Int in
                var channel: UnsafeMutablePointer<Float>? = pointer.baseAddress
                return withUnsafePointer(to: &channel) { channels in
                    Int(rubberband_retrieve(state, channels, UInt32(min(available, pointer.count))))
                }
            }
            guard count > 0 else { return }
            output.append(contentsOf: buffer[0..<count])
        }
    }
}
