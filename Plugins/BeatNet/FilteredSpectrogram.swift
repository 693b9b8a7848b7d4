import Foundation
import TactusDSP

/// BeatNet's spectrogram front end, streamed: madmom's `FramedSignal` (frames of
/// ``frameSize`` samples centred every ``hop`` samples, the first centred on sample 0, zeros
/// outside the signal, `ceil(length / hop)` frames), its `ShortTimeFourierTransform` (a Hann
/// window as numpy's `hanning`, the first `frameSize / 2` bins, no Nyquist bin) and its
/// `FilteredSpectrogram` (magnitudes through the ``LogFilterbank``).
///
/// The output is the filtered magnitudes, ``bandCount`` per frame, before the logarithm: a
/// gain on the audio is a gain on them, which ``BeatNetFeatures`` uses to normalise the level.
/// Frames are transformed two at a time (``PairedSpectrum``), so a frame is handed on when
/// the next one is complete (or at the end). The buffers are allocated once; the samples
/// kept are one frame's worth.
final class FilteredSpectrogram {
    /// BeatNet's settings at 22,050 Hz: 20 ms hop, 64 ms frames (`int(0.064 * 22050)`).
    static let hop = 441
    static let frameSize = 1411

    let filterbank: LogFilterbank
    var bandCount: Int { filterbank.bands.count }

    private let spectra = PairedSpectrum(size: FilteredSpectrogram.frameSize)
    /// Whether ``spectra``'s first frame holds a windowed frame waiting for its pair.
    private var waiting = false
    private let window: [Float]
    /// Samples from ``bufferStart`` on (the signal's sample index of `buffer[0]`).
    private var buffer: [Float] = []
    private var bufferStart = 0
    /// Samples received so far.
    private var received = 0
    /// The next frame to compute.
    private var nextFrame = 0
    private var magnitudes: [Float]
    private var pairedMagnitudes: [Float]
    private var bands: [Float]

    init(sampleRate: Double) {
        let size = Self.frameSize
        window = (0..<size).map { Float(0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(size - 1))) }
        filterbank = LogFilterbank(binCount: size / 2, sampleRate: sampleRate)
        magnitudes = [Float](repeating: 0, count: size / 2)
        pairedMagnitudes = [Float](repeating: 0, count: size / 2)
        bands = [Float](repeating: 0, count: filterbank.bands.count)
        buffer.reserveCapacity(4 * size)
    }

    /// Appends samples; calls `frame` with each frame's ``bandCount`` filtered magnitudes as
    /// soon as its samples are all there.
    func consume(_ samples: UnsafeBufferPointer<Float>, frame: (UnsafeBufferPointer<Float>) -> Void) {
        var offset = 0
        while offset < samples.count {
            // Take only what fits beside one frame, so the buffer never grows past its capacity.
            let take = min(samples.count - offset, max(1, buffer.capacity - buffer.count))
            buffer.append(contentsOf: UnsafeBufferPointer(rebasing: samples[offset..<(offset + take)]))
            received += take
            offset += take
            while frameEnd(nextFrame) <= received {
                emit(frame)
            }
            discardConsumed()
        }
    }

    /// Ends the signal: computes the remaining frames (zero beyond the end).
    func finish(frame: (UnsafeBufferPointer<Float>) -> Void) {
        let total = (received + Self.hop - 1) / Self.hop
        while nextFrame < total {
            emit(frame)
        }
        if waiting {
            // The last frame has no pair: it goes with silence, whose spectrum is dropped.
            spectra.second.update(repeating: 0, count: Self.frameSize)
            transformPair()
            filter(magnitudes, frame)
            waiting = false
        }
    }

    private func frameStart(_ index: Int) -> Int { index * Self.hop - Self.frameSize / 2 }
    private func frameEnd(_ index: Int) -> Int { frameStart(index) + Self.frameSize }

    /// Windows the next frame into ``spectra``; every second frame, transforms the pair and
    /// hands both on.
    private func emit(_ frame: (UnsafeBufferPointer<Float>) -> Void) {
        let start = frameStart(nextFrame)
        let target = waiting ? spectra.second : spectra.first
        let size = Self.frameSize
        let available = max(0, min(start + size, received) - max(start, 0))  // samples inside the signal
        let first = max(-start, 0)  // index of the first of them in the frame
        // Zeros outside the signal, the windowed samples inside it.
        target.update(repeating: 0, count: first)
        (target + first + available).update(repeating: 0, count: size - first - available)
        buffer.withUnsafeBufferPointer { buffer in
            window.withUnsafeBufferPointer { window in
                multiplyElementwise(
                    buffer.baseAddress! + (start + first - bufferStart), window.baseAddress! + first, into: target + first, count: available)
            }
        }
        nextFrame += 1
        if !waiting {
            waiting = true
            return
        }
        waiting = false
        transformPair()
        filter(magnitudes, frame)
        filter(pairedMagnitudes, frame)
    }

    /// The magnitudes of ``spectra``'s two frames into ``magnitudes`` and ``pairedMagnitudes``.
    private func transformPair() {
        magnitudes.withUnsafeMutableBufferPointer { first in
            pairedMagnitudes.withUnsafeMutableBufferPointer { spectra.transform(first: first.baseAddress!, second: $0.baseAddress!) }
        }
    }

    /// The filtered magnitudes of one frame's spectrum, handed to `frame`.
    private func filter(_ spectrum: [Float], _ frame: (UnsafeBufferPointer<Float>) -> Void) {
        bands.withUnsafeMutableBufferPointer { bands in
            spectrum.withUnsafeBufferPointer { filterbank.apply($0.baseAddress!, into: bands.baseAddress!) }
            frame(UnsafeBufferPointer(bands))
        }
    }

    /// Drops the samples no later frame needs.
    private func discardConsumed() {
        let needed = max(frameStart(nextFrame), 0)
        let drop = needed - bufferStart
        if drop > 0 && drop <= buffer.count && (drop >= Self.frameSize || buffer.count == buffer.capacity) {
            buffer.removeFirst(drop)
            bufferStart += drop
        }
    }
}
