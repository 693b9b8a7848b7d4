import TactusModel

/// What a decoder reports about a stream once it is open.
struct StreamDescription {
    var format: AudioFormat
    var codec: String
    /// The file's sample rate.
    var sampleRate: Int
    /// The rate of the samples the decoder delivers: ``sampleRate``, or less when the decoder
    /// lowers it natively (``DecodingOptions/minimumSampleRate``).
    var outputRate: Int
    var channels: Int
    /// The number of frames the header announces (at ``outputRate``), when it is plausible for
    /// the file size.
    var estimatedFrames: Int64?
    /// The number of frames the header promises exactly (Xing/Info, FLAC STREAMINFO, WAV data
    /// chunk; at ``outputRate``): decoding fewer means the data was cut short.
    var promisedFrames: Int64?
    /// Set when the header shows the stream was cut (an Ogg stream without its last page).
    var truncation: String?
    var bitrate: Int?
    var tags: AudioTags
}

/// One step of a decoder.
enum DecodeStep {
    /// Interleaved frames of `channels` samples, valid until the next call.
    case frames(UnsafeBufferPointer<Float>, channels: Int)
    /// `count` samples written at the start of the block given to the decoder, its channels
    /// averaged and clamped to [-1, 1] as ``AudioStream`` averages and clamps frames.
    case mono(count: Int)
    /// The stream ended normally.
    case end
    /// The decoder gave up; the message is its own.
    case failure(String)
}

/// A decoder of one open stream (libmpg123 or libsndfile underneath). Not thread-safe.
protocol FrameDecoder: AnyObject {
    var stream: StreamDescription { get }
    /// Decodes the next piece of the stream: interleaved frames of the decoder's own, or mono
    /// samples written into `block` (at most its length).
    func next(into block: UnsafeMutableBufferPointer<Float>) -> DecodeStep
}

extension StreamDescription {
    /// Header frame counts that would mean fewer than `minimumBytesPerSecond` bytes per second
    /// of audio are lies (or damage): a 1 KB file cannot hold two hours.
    static let minimumBytesPerSecond = 64.0

    /// `frames`, or nil when implausible for `byteCount` bytes at `sampleRate`.
    static func plausible(frames: Int64, sampleRate: Int, byteCount: Int64) -> Int64? {
        guard frames > 0, sampleRate > 0 else { return nil }
        let seconds = Double(frames) / Double(sampleRate)
        return Double(byteCount) / seconds >= minimumBytesPerSecond ? frames : nil
    }
}
