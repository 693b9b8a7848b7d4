import CSndFile
import Foundation

/// Writes mono audio as a 16-bit PCM WAV file through libsndfile.
enum WAVFile {
    static func write(_ samples: [Float], sampleRate: Int, to path: String) throws(StretchError) {
        var info = SF_INFO()
        info.samplerate = Int32(sampleRate)
        info.channels = 1
        info.format = Int32(SF_FORMAT_WAV | SF_FORMAT_PCM_16)
        guard let file = sf_open(path, Int32(SFM_WRITE), &info) else {
            throw .cannotWrite(path: path, reason: String(cString: sf_strerror(nil)))
        }
        // Float samples beyond [-1, 1] are clipped, not wrapped.
        sf_command(file, Int32(SFC_SET_CLIPPING), nil, Int32(SF_TRUE))
        let written = samples.withUnsafeBufferPointer { sf_writef_float(file, $0.baseAddress, sf_count_t($0.count)) }
        let closed = sf_close(file)
        guard written == samples.count, closed == 0 else {
            throw .cannotWrite(path: path, reason: "wrote \(written) of \(samples.count) samples")
        }
    }
}
