import CSndFile
import Foundation

/// A mono 16-bit PCM WAV file written through libsndfile, a block at a time, into an
/// ``OutputFile`` (put in place by its owner once closed).
final class WAVWriter {
    let path: String
    private var file: OpaquePointer?
    private(set) var frames = 0

    init(into output: OutputFile, sampleRate: Int) throws(StretchError) {
        path = output.path
        var info = SF_INFO()
        info.samplerate = Int32(sampleRate)
        info.channels = 1
        info.format = Int32(SF_FORMAT_WAV | SF_FORMAT_PCM_16)
        guard let file = sf_open_fd(output.descriptor, Int32(SFM_WRITE), &info, Int32(SF_FALSE)) else {
            throw .cannotWrite(path: path, reason: String(cString: sf_strerror(nil)))
        }
        // Float samples beyond [-1, 1] are clipped, not wrapped.
        sf_command(file, Int32(SFC_SET_CLIPPING), nil, Int32(SF_TRUE))
        self.file = file
    }

    func write(_ samples: ArraySlice<Float>) throws(StretchError) {
        guard let file, !samples.isEmpty else { return }
        let written = samples.withUnsafeBufferPointer { sf_writef_float(file, $0.baseAddress, sf_count_t($0.count)) }
        frames += Int(written)
        guard written == samples.count else {
            throw .cannotWrite(path: path, reason: "wrote \(written) of \(samples.count) samples (disk full?)")
        }
    }

    /// Finishes the file (its header's sizes).
    func close() throws(StretchError) {
        guard let file else { return }
        self.file = nil
        guard sf_close(file) == 0 else { throw .cannotWrite(path: path, reason: "closing the file failed") }
    }

    deinit {
        if let file { sf_close(file) }
    }
}
