import CFLAC

/// The samples of a native FLAC stream, decoded by libFLAC's stream decoder and averaged to
/// mono straight from its per-channel integer blocks: libsndfile would copy each frame
/// through its own buffers into interleaved floats first, which cost about a tenth of a
/// song's analysis.
///
/// The stream is opened by libsndfile (``SndFileDecoder``: its header, tags and checks); this
/// reader decodes its samples as libsndfile's `sf_readf_float` would deliver them, to the
/// bit: each sample is `Float(value) * 2^-(bits - 1)` (libsndfile's normalisation, per frame),
/// the channels are averaged as ``AudioStream/downmix(_:channels:into:)`` does, no more frames
/// than STREAMINFO announces are delivered, and a frame is dropped, decoding stops at the next
/// read and the stream fails with libsndfile's message where libsndfile's callbacks do so.
final class FLACFrameReader {
    private let decoder: UnsafeMutablePointer<FLAC__StreamDecoder>
    private let reader: ByteReader
    private let channels: Int
    /// Frames still to deliver (STREAMINFO's count less those delivered), nil when the
    /// header announces none.
    private var remaining: Int64?
    /// libsndfile's message for the last error libFLAC reported: once set, the next read of
    /// bytes stops decoding.
    private var error: String?
    /// The frame libFLAC decoded last, until all its samples are delivered: its channels'
    /// samples (valid until libFLAC decodes the next), its length, how many are delivered.
    private var frame: (channels: UnsafePointer<UnsafePointer<Int32>?>, length: Int, delivered: Int, scale: Float)?
    /// The block being read (during ``next(into:)`` only), and how much of it is written.
    private var block = UnsafeMutableBufferPointer<Float>(start: nil, count: 0)
    private var filled = 0

    /// A decoder of the stream `reader` holds, which libsndfile has opened already: `frames`
    /// is its frame count (`SF_INFO.frames`), `channels` its channel count.
    /// Nil when libFLAC cannot make a decoder.
    init?(reader: ByteReader, channels: Int, frames: Int64) {
        guard let decoder = FLAC__stream_decoder_new() else { return nil }
        self.decoder = decoder
        self.reader = reader
        self.channels = channels
        remaining = frames > 0 && frames < Int64.max ? frames : nil
        let context = Unmanaged.passUnretained(self).toOpaque()
        let status = FLAC__stream_decoder_init_stream(
            decoder,
            { _, buffer, bytes, context in
                let frames = Unmanaged<FLACFrameReader>.fromOpaque(context!).takeUnretainedValue()
                return frames.read(into: buffer, count: bytes!)
            },
            { _, offset, context in
                let frames = Unmanaged<FLACFrameReader>.fromOpaque(context!).takeUnretainedValue()
                _ = frames.reader.seek(to: Int64(truncatingIfNeeded: offset), whence: SEEK_SET)
                return FLAC__STREAM_DECODER_SEEK_STATUS_OK
            },
            { _, offset, context in
                offset!.pointee = UInt64(truncatingIfNeeded: Unmanaged<FLACFrameReader>.fromOpaque(context!).takeUnretainedValue().reader.position)
                return FLAC__STREAM_DECODER_TELL_STATUS_OK
            },
            { _, length, context in
                let reader = Unmanaged<FLACFrameReader>.fromOpaque(context!).takeUnretainedValue().reader
                length!.pointee = UInt64(truncatingIfNeeded: reader.length)
                return reader.length == 0 ? FLAC__STREAM_DECODER_LENGTH_STATUS_ERROR : FLAC__STREAM_DECODER_LENGTH_STATUS_OK
            },
            { _, context in
                let reader = Unmanaged<FLACFrameReader>.fromOpaque(context!).takeUnretainedValue().reader
                return reader.position == reader.length ? 1 : 0
            },
            { _, frame, buffer, context in
                Unmanaged<FLACFrameReader>.fromOpaque(context!).takeUnretainedValue().take(frame!, buffer!)
                return FLAC__STREAM_DECODER_WRITE_STATUS_CONTINUE
            },
            nil,
            { _, status, context in
                Unmanaged<FLACFrameReader>.fromOpaque(context!).takeUnretainedValue().error = FLACFrameReader.message(status)
            },
            context)
        // Failing now, the reader is released whole: its deinit deletes the decoder.
        guard status == FLAC__STREAM_DECODER_INIT_STATUS_OK else { return nil }
        // From the start again (libsndfile's reading of the header left the reader elsewhere);
        // libFLAC skips an ID3v2 tag before the stream as libsndfile does.
        _ = reader.seek(to: 0, whence: SEEK_SET)
        FLAC__stream_decoder_process_until_end_of_metadata(decoder)
    }

    deinit {
        FLAC__stream_decoder_delete(decoder)
    }

    /// Writes the next mono samples into `block` (filling it: fewer only at the end), or says
    /// that the stream has ended, or gives libsndfile's message for the error that ended it.
    func next(into block: UnsafeMutableBufferPointer<Float>) -> DecodeStep {
        self.block = block
        defer { self.block = UnsafeMutableBufferPointer(start: nil, count: 0) }
        filled = 0
        if remaining != 0 {
            if FLAC__stream_decoder_get_state(decoder).rawValue > FLAC__STREAM_DECODER_END_OF_STREAM.rawValue { frame = nil }
            deliver()
            while filled < block.count {
                guard FLAC__stream_decoder_process_single(decoder) != 0,
                      FLAC__stream_decoder_get_state(decoder).rawValue < FLAC__STREAM_DECODER_END_OF_STREAM.rawValue else {
                    frame = nil
                    break
                }
            }
            if let left = remaining {
                filled = Int(min(Int64(filled), left))
                remaining = left - Int64(filled)
            }
        }
        if filled > 0 { return .mono(count: filled) }
        return error.map { .failure($0) } ?? .end
    }

    /// libFLAC asks for bytes: none once an error was reported (or at the end) stops it.
    private func read(into buffer: UnsafeMutablePointer<UInt8>?, count: UnsafeMutablePointer<Int>) -> FLAC__StreamDecoderReadStatus {
        guard let buffer, count.pointee > 0 else {
            count.pointee = 0
            return FLAC__STREAM_DECODER_READ_STATUS_ABORT
        }
        count.pointee = max(reader.readSequentially(into: buffer, count: count.pointee), 0)
        return count.pointee > 0 && error == nil ? FLAC__STREAM_DECODER_READ_STATUS_CONTINUE : FLAC__STREAM_DECODER_READ_STATUS_ABORT
    }

    /// libFLAC decoded `decoded` into `samples` (one array per channel): its samples are
    /// delivered from now on.
    private func take(_ decoded: UnsafePointer<FLAC__Frame>, _ samples: UnsafePointer<UnsafePointer<Int32>?>) {
        let header = decoded.pointee.header
        // libsndfile's factor, computed as it does (in C int, then double, then float).
        let bits = Int32(truncatingIfNeeded: header.bits_per_sample) - 1
        let scale = Float(1.0 / Double(Int32(1) &<< bits))
        // A frame libsndfile refuses delivers nothing.
        frame = nil
        guard Int(header.channels) == channels else {
            error = "Error : flac channel changed mid stream."
            return
        }
        guard header.blocksize <= 65535 else {
            error = "Unspecified internal error."
            return
        }
        frame = (samples, Int(header.blocksize), 0, scale)
        deliver()
    }

    /// Averages the samples of the current frame not yet delivered into the block, as many
    /// as it has room for, clamped to [-1, 1] (as ``AudioStream/downmix(_:channels:into:)``
    /// clamps; a damaged stream may decode to more than its bits hold).
    private func deliver() {
        guard let current = frame, let output = block.baseAddress.map({ $0 + filled }) else { return }
        let count = min(current.length - current.delivered, block.count - filled)
        guard count > 0 else { return }
        let scale = current.scale, start = current.delivered
        @inline(__always) func clamp(_ x: Float) -> Float { min(max(x, -1), 1) }
        switch channels {
        case 1:
            let input = current.channels[0]! + start
            for index in 0..<count { output[index] = clamp(Float(input[index]) * scale) }
        case 2:
            let left = current.channels[0]! + start, right = current.channels[1]! + start
            for index in 0..<count { output[index] = clamp((Float(left[index]) * scale + Float(right[index]) * scale) * 0.5) }
        default:
            let share = 1 / Float(channels)
            for index in 0..<count {
                var sum: Float = 0
                for channel in 0..<channels { sum += Float(current.channels[channel]![start + index]) * scale }
                output[index] = clamp(sum * share)
            }
        }
        filled += count
        frame!.delivered += count
    }

    /// libsndfile's message for an error libFLAC reports.
    private static func message(_ status: FLAC__StreamDecoderErrorStatus) -> String {
        switch status {
        case FLAC__STREAM_DECODER_ERROR_STATUS_LOST_SYNC: "Error : flac decoder lost sync."
        case FLAC__STREAM_DECODER_ERROR_STATUS_BAD_HEADER: "Error : bad flac header."
        default: "Error : unknown error in flac decoder."
        }
    }
}
