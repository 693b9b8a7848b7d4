import CMPG123
import Foundation
import TactusModel

/// MPEG audio (Layer I, II, III; MPEG-1, 2, 2.5) through libmpg123, reading through a
/// replaced reader so files and memory are decoded alike. Output is 32-bit float straight
/// from the synthesis filter, mono: libmpg123 mixes the channels (their average, the same as
/// ``AudioStream``'s down-mix to within float rounding) and so synthesises one channel
/// instead of two; gapless trimming (LAME/Xing) is on. Given a minimum rate, it synthesises
/// at 1/2 or 1/4 of the stream's rate when that is still at or above it (libmpg123's own
/// down-sampling: the sub-bands above the new Nyquist frequency are left out, and the
/// synthesis does half or a quarter of the work).
final class MPG123Decoder: FrameDecoder {
    private let handle: OpaquePointer
    /// Kept alive for libmpg123's callbacks, which receive it unretained.
    private let reader: ByteReader
    let stream: StreamDescription
    private var channels: Int
    /// Consecutive decode calls without output, to stop a decoder that makes no progress.
    private var idleCalls = 0

    /// How far libmpg123 may search for the next frame after damaged data.
    static let resyncLimit = 64 * 1024

    private static let libraryReady: Bool = mpg123_init() == MPG123_OK.rawValue

    init(reader: ByteReader, hasFrameCount: Bool, minimumRate: Double? = nil) throws(AudioError) {
        self.reader = reader
        var error: Int32 = 0
        guard Self.libraryReady, let handle = mpg123_new(nil, &error) else {
            throw .corrupt(file: reader.name, decoderMessage: "libmpg123 could not start (error \(error))")
        }
        self.handle = handle
        do throws(AudioError) {
            try Self.configure(handle, reader: reader, minimumRate: minimumRate)
            var rate = 0, channelCount: Int32 = 0, encoding: Int32 = 0
            guard mpg123_getformat(handle, &rate, &channelCount, &encoding) == MPG123_OK.rawValue else {
                throw .corrupt(file: reader.name, decoderMessage: String(cString: mpg123_strerror(handle)))
            }
            guard rate > 0, (1...2).contains(channelCount) else {
                throw .corrupt(file: reader.name, decoderMessage: "libmpg123 reports \(channelCount) channels at \(rate) Hz")
            }
            channels = Int(channelCount)
            var info = mpg123_frameinfo2()
            _ = mpg123_info2(handle, &info)
            // The stream's own channels (the output is mixed to mono).
            let streamChannels = info.mode == Int32(MPG123_M_MONO.rawValue) ? 1 : 2
            if !hasFrameCount {
                // Without a Xing/Info frame count, the length from the file size is a guess
                // (wrong for VBR): count the frames (headers only, no decoding), then return.
                _ = mpg123_scan(handle)
            }
            let length = Int64(mpg123_length(handle))
            let estimated = length > 0 ? StreamDescription.plausible(frames: length, sampleRate: rate, byteCount: reader.length) : nil
            let codec = ["mp1", "mp2", "mp3"][max(0, min(2, Int(info.layer) - 1))]
            var bitrate: Int?
            if info.vbr == Int32(MPG123_CBR.rawValue), info.bitrate > 0 {
                bitrate = Int(info.bitrate) * 1000
            } else if let estimated {
                bitrate = Int(Double(reader.length) * 8 / (Double(estimated) / Double(rate)))
            }
            stream = StreamDescription(
                format: .mpeg, codec: codec, sampleRate: info.rate > 0 ? info.rate : rate, outputRate: rate, channels: streamChannels,
                estimatedFrames: estimated, promisedFrames: hasFrameCount ? estimated : nil, truncation: nil,
                bitrate: bitrate, tags: Self.tags(handle))
        } catch {
            mpg123_delete(handle)
            throw error
        }
    }

    deinit {
        mpg123_close(handle)
        mpg123_delete(handle)
    }

    /// The output rates libmpg123 may choose. It takes the stream's rate if allowed, else half,
    /// else a quarter of it (`MPG123_AUTO_RESAMPLE`; the MPEG rates' halves and quarters are
    /// MPEG rates). With a minimum rate, the rates from twice the minimum up are refused, so it
    /// takes the lowest of the three at or above the minimum, or the stream's own rate when
    /// that is below. Nil for every rate, and for minimums below 6 kHz, where a quarter of
    /// 48 kHz is still at twice the minimum and libmpg123 would resample by its own
    /// interpolation instead.
    static func allowedRates(minimum: Double?) -> ((Int) -> Bool)? {
        guard let minimum, minimum >= 6000 else { return nil }
        return { Double($0) < 2 * minimum }
    }

    private static func configure(_ handle: OpaquePointer, reader: ByteReader, minimumRate: Double?) throws(AudioError) {
        let flags = Int(MPG123_QUIET.rawValue | MPG123_GAPLESS.rawValue | MPG123_MONO_MIX.rawValue | MPG123_AUTO_RESAMPLE.rawValue)
        var ok = mpg123_param2(handle, Int32(MPG123_ADD_FLAGS.rawValue), flags, 0) == MPG123_OK.rawValue
        ok = ok && mpg123_param2(handle, Int32(MPG123_RESYNC_LIMIT.rawValue), resyncLimit, 0) == MPG123_OK.rawValue
        ok = ok && mpg123_format_none(handle) == MPG123_OK.rawValue
        var rates: UnsafePointer<Int>?
        var rateCount = 0
        mpg123_rates(&rates, &rateCount)
        let allowed = allowedRates(minimum: minimumRate)
        for index in 0..<rateCount where ok && allowed?(rates![index]) ?? true {
            let channels = Int32(MPG123_MONO.rawValue | MPG123_STEREO.rawValue)
            ok = mpg123_format(handle, rates![index], channels, Int32(MPG123_ENC_FLOAT_32.rawValue)) == MPG123_OK.rawValue
        }
        ok = ok && mpg123_replace_reader_handle(handle, { context, buffer, count in
            guard let context, let buffer else { return -1 }
            let reader = Unmanaged<ByteReader>.fromOpaque(context).takeUnretainedValue()
            return reader.readSequentially(into: buffer, count: count)
        }, { context, offset, whence in
            guard let context else { return -1 }
            let reader = Unmanaged<ByteReader>.fromOpaque(context).takeUnretainedValue()
            return off_t(reader.seek(to: Int64(offset), whence: whence))
        }, nil) == MPG123_OK.rawValue
        ok = ok && mpg123_open_handle(handle, Unmanaged.passUnretained(reader).toOpaque()) == MPG123_OK.rawValue
        guard ok else {
            throw .corrupt(file: reader.name, decoderMessage: String(cString: mpg123_strerror(handle)))
        }
    }

    func next(into _: UnsafeMutableBufferPointer<Float>) -> DecodeStep {
        while true {
            var frameNumber: off_t = 0
            var audio: UnsafeMutablePointer<UInt8>?
            var byteCount = 0
            let status = mpg123_decode_frame(handle, &frameNumber, &audio, &byteCount)
            switch status {
            case MPG123_OK.rawValue, MPG123_NEW_FORMAT.rawValue:
                if status == MPG123_NEW_FORMAT.rawValue {
                    var rate = 0, channelCount: Int32 = 0, encoding: Int32 = 0
                    if mpg123_getformat(handle, &rate, &channelCount, &encoding) == MPG123_OK.rawValue {
                        channels = Int(channelCount)
                    }
                }
                if let audio, byteCount >= MemoryLayout<Float>.size * channels {
                    idleCalls = 0
                    let count = byteCount / MemoryLayout<Float>.size
                    let samples = UnsafeRawPointer(audio).assumingMemoryBound(to: Float.self)
                    return .frames(UnsafeBufferPointer(start: samples, count: count - count % channels), channels: channels)
                }
                idleCalls += 1
                if idleCalls > 100_000 { return .failure("the decoder makes no progress") }
            case MPG123_DONE.rawValue, MPG123_NEED_MORE.rawValue:
                return .end
            default:
                return .failure(String(cString: mpg123_strerror(handle)))
            }
        }
    }

    /// ID3v2 fields (converted to UTF-8 by libmpg123 from whatever encoding the frame
    /// declares), falling back to ID3v1 (Latin-1); UTF-8 stored as Latin-1 is repaired.
    private static func tags(_ handle: OpaquePointer) -> AudioTags {
        var tags = AudioTags()
        guard mpg123_meta_check(handle) & MPG123_ID3 != 0 else { return tags }
        var v1: UnsafeMutablePointer<mpg123_id3v1>?
        var v2: UnsafeMutablePointer<mpg123_id3v2>?
        guard mpg123_id3(handle, &v1, &v2) == MPG123_OK.rawValue else { return tags }
        if let v2 = v2?.pointee {
            tags.title = text(v2.title)
            tags.artist = text(v2.artist)
            tags.album = text(v2.album)
            tags.genre = TagText.id3Genre(text(v2.genre))
            tags.year = TagText.year(text(v2.year))
        }
        if var v1 = v1?.pointee {
            tags.title = tags.title ?? withUnsafeBytes(of: &v1.title) { TagText.latin1($0) }
            tags.artist = tags.artist ?? withUnsafeBytes(of: &v1.artist) { TagText.latin1($0) }
            tags.album = tags.album ?? withUnsafeBytes(of: &v1.album) { TagText.latin1($0) }
            tags.year = tags.year ?? TagText.year(withUnsafeBytes(of: &v1.year) { TagText.latin1($0) })
            tags.genre = tags.genre ?? TagText.id3v1GenreName(Int(v1.genre))
        }
        tags.title = TagText.repairingMojibake(tags.title)
        tags.artist = TagText.repairingMojibake(tags.artist)
        tags.album = TagText.repairingMojibake(tags.album)
        tags.genre = TagText.repairingMojibake(tags.genre)
        return tags.bounded()
    }

    private static func text(_ string: UnsafeMutablePointer<mpg123_string>?) -> String? {
        guard let string = string?.pointee, let bytes = string.p, string.fill > 0 else { return nil }
        return TagText.clean(UnsafeRawBufferPointer(start: bytes, count: string.fill))
    }
}
