import CSndFile
import Foundation
import TactusModel

/// Everything libsndfile reads (WAV, RF64, AIFF, FLAC, Ogg Vorbis/Opus/FLAC, AU, W64, CAF...)
/// through its virtual I/O, so files and memory are decoded alike. Integer formats are
/// normalised to [-1, 1] by libsndfile. The samples of native FLAC are decoded by libFLAC
/// directly (``FLACFrameReader``), the same to the bit, at less cost.
final class SndFileDecoder: FrameDecoder {
    private let file: OpaquePointer
    /// Kept alive for libsndfile's callbacks, which receive it unretained.
    private let reader: ByteReader
    let stream: StreamDescription
    /// Interleaved frames read by libsndfile; handed out until the next read.
    private let buffer: UnsafeMutableBufferPointer<Float>
    private let blockFrames: Int
    /// The reader of a native FLAC stream's samples, in libsndfile's place.
    private let flac: FLACFrameReader?

    /// libsndfile accepts up to 1024 channels; a header claiming more is damage.
    static let maximumChannels = 1024
    static let sampleRates = 1...1_536_000

    /// Opens the stream. `recognized` is what the content looked like, for the error
    /// when libsndfile refuses it.
    init(reader: ByteReader, recognized: RecognizedContent, blockFrames: Int) throws(AudioError) {
        self.reader = reader
        self.blockFrames = blockFrames
        // libsndfile copies the callbacks when opening.
        var virtualIO = SF_VIRTUAL_IO(
            get_filelen: { context in
                Unmanaged<ByteReader>.fromOpaque(context!).takeUnretainedValue().length
            },
            seek: { offset, whence, context in
                Unmanaged<ByteReader>.fromOpaque(context!).takeUnretainedValue().seek(to: offset, whence: whence)
            },
            read: { buffer, count, context in
                guard let buffer, count > 0 else { return 0 }
                let reader = Unmanaged<ByteReader>.fromOpaque(context!).takeUnretainedValue()
                return sf_count_t(max(reader.readSequentially(into: buffer, count: Int(count)), 0))
            },
            write: nil,
            tell: { context in
                Unmanaged<ByteReader>.fromOpaque(context!).takeUnretainedValue().position
            })
        // Content that starts as an MPEG frame but held no chain of frames: libsndfile could only
        // guess MPEG, which is refused below, and its own libmpg123 (not quiet) would print a
        // warning for it on the process's standard error (30,000 such files under a watched root
        // wrote 3.3 MB there: attack round 8, L5).
        if case .unknown = recognized, Self.startsWithMPEGSync(reader) {
            throw .unsupportedFormat(file: reader.name, detail: Self.contentSummary(reader))
        }
        var info = SF_INFO()
        guard let file = sf_open_virtual(&virtualIO, Int32(SFM_READ), &info, Unmanaged.passUnretained(reader).toOpaque()) else {
            throw Self.openError(reader: reader, recognized: recognized, message: String(cString: sf_strerror(nil)))
        }
        self.file = file
        let major = info.format & Int32(SF_FORMAT_TYPEMASK)
        let subtype = info.format & Int32(SF_FORMAT_SUBMASK)
        guard major != Int32(SF_FORMAT_MPEG) else {
            // libsndfile guessed MPEG where no chain of MPEG frames was found.
            sf_close(file)
            throw .unsupportedFormat(file: reader.name, detail: Self.contentSummary(reader))
        }
        guard (1...Self.maximumChannels).contains(Int(info.channels)), Self.sampleRates.contains(Int(info.samplerate)) else {
            sf_close(file)
            throw .corrupt(file: reader.name, decoderMessage: Self.declaration(channels: Int(info.channels), sampleRate: Int64(info.samplerate)))
        }
        let rate = Int(info.samplerate), channels = Int(info.channels)
        let format = Self.formatName(major: major, file: file)
        let codec: String
        switch (major, recognized) {
        case (Int32(SF_FORMAT_FLAC), _): codec = "flac"
        case (Int32(SF_FORMAT_OGG), .sndfile(_, let oggCodec?)) where oggCodec != "unknown": codec = oggCodec
        default: codec = Self.codecName(subtype: subtype, file: file)
        }
        let knownFrames = info.frames > 0 && info.frames < Int64.max / 2 ? Int64(info.frames) : nil
        let estimated = knownFrames.flatMap { StreamDescription.plausible(frames: $0, sampleRate: rate, byteCount: reader.length) }
        // libsndfile's frame count is exact (from the header, or the last Ogg page); a WAV
        // data chunk may claim more than the file holds.
        var promised = estimated
        if case .wav(let claimed?, _) = recognized { promised = max(claimed, estimated ?? 0) }
        // Without its last page, libsndfile cannot tell an Ogg stream's length.
        let truncation = format == .ogg && knownFrames == nil ? "the end of the Ogg stream is missing" : nil
        stream = StreamDescription(
            format: format, codec: codec, sampleRate: rate, outputRate: rate, channels: channels,
            estimatedFrames: estimated, promisedFrames: promised, truncation: truncation,
            bitrate: Self.bitrate(subtype: subtype, rate: rate, channels: channels, frames: estimated, byteCount: reader.length),
            tags: Self.tags(file))
        flac = major == Int32(SF_FORMAT_FLAC)
            ? FLACFrameReader(reader: reader, channels: channels, frames: Int64(info.frames)) : nil
        buffer = .allocate(capacity: flac == nil ? blockFrames * channels : 0)
    }

    deinit {
        sf_close(file)
        buffer.deallocate()
    }

    func next(into block: UnsafeMutableBufferPointer<Float>) -> DecodeStep {
        if let flac { return flac.next(into: block) }
        let channels = stream.channels
        let frames = sf_readf_float(file, buffer.baseAddress, sf_count_t(blockFrames))
        if frames > 0 {
            return .frames(UnsafeBufferPointer(rebasing: buffer[0..<Int(frames) * channels]), channels: channels)
        }
        let status = sf_error(file)
        return status == 0 ? .end : .failure(String(cString: sf_strerror(file)))
    }

    // MARK: Describing the stream

    private static func openError(reader: ByteReader, recognized: RecognizedContent, message: String) -> AudioError {
        switch recognized {
        case .unknown:
            .unsupportedFormat(file: reader.name, detail: contentSummary(reader))
        case .sndfile(.ogg, let codec?) where !["vorbis", "opus", "flac"].contains(codec):
            .unsupportedFormat(file: reader.name, detail: "an Ogg stream of codec \(codec)")
        case .wav(_, let declared?) where declared.channels == 0 || declared.sampleRate == 0:
            // libsndfile says only "SF_INFO struct incomplete".
            .corrupt(file: reader.name, decoderMessage: Self.declaration(channels: declared.channels, sampleRate: declared.sampleRate))
        default:
            .corrupt(file: reader.name, decoderMessage: message)
        }
    }

    /// "the header declares 2 channels at 0 Hz", for a header no one can decode.
    private static func declaration(channels: Int, sampleRate: Int64) -> String {
        "the header declares \(channels) channels at \(sampleRate) Hz"
    }

    /// Whether the content starts with an MPEG audio frame's sync word (11 bits set), which no
    /// other format libsndfile reads starts with.
    private static func startsWithMPEGSync(_ reader: ByteReader) -> Bool {
        let head = reader.bytes(at: 0, count: 2)
        return head.count == 2 && head[0] == 0xFF && head[1] & 0xE0 == 0xE0
    }

    /// "1234 bytes starting 3F 2A 00 ... are not audio Tactus recognises", for messages.
    static func contentSummary(_ reader: ByteReader) -> String {
        let head = reader.bytes(at: 0, count: 8).map { String($0, radix: 16, uppercase: true) }
            .map { $0.count == 1 ? "0" + $0 : $0 }.joined(separator: " ")
        return "\(reader.length) byte\(reader.length == 1 ? "" : "s") starting \(head) are not audio Tactus recognises"
    }

    private static func formatName(major: Int32, file: OpaquePointer) -> AudioFormat {
        switch major {
        case Int32(SF_FORMAT_WAV), Int32(SF_FORMAT_WAVEX): return .wav
        case Int32(SF_FORMAT_RF64): return .rf64
        case Int32(SF_FORMAT_AIFF): return .aiff
        case Int32(SF_FORMAT_FLAC): return .flac
        case Int32(SF_FORMAT_OGG): return .ogg
        default:
            var info = SF_FORMAT_INFO(format: major, name: nil, extension: nil)
            guard sf_command(file, Int32(SFC_GET_FORMAT_INFO), &info, Int32(MemoryLayout<SF_FORMAT_INFO>.size)) == 0,
                  let ext = info.extension else {
                return AudioFormat(rawValue: "sndfile-\(String(major, radix: 16))")
            }
            return AudioFormat(rawValue: String(cString: ext))
        }
    }

    private static func codecName(subtype: Int32, file: OpaquePointer) -> String {
        let names: [Int: String] = [
            SF_FORMAT_PCM_S8: "pcm-s8", SF_FORMAT_PCM_16: "pcm-s16",
            SF_FORMAT_PCM_24: "pcm-s24", SF_FORMAT_PCM_32: "pcm-s32",
            SF_FORMAT_PCM_U8: "pcm-u8", SF_FORMAT_FLOAT: "pcm-f32",
            SF_FORMAT_DOUBLE: "pcm-f64", SF_FORMAT_ULAW: "ulaw",
            SF_FORMAT_ALAW: "alaw", SF_FORMAT_IMA_ADPCM: "ima-adpcm",
            SF_FORMAT_MS_ADPCM: "ms-adpcm", SF_FORMAT_GSM610: "gsm610",
            SF_FORMAT_VORBIS: "vorbis", SF_FORMAT_OPUS: "opus",
            SF_FORMAT_ALAC_16: "alac", SF_FORMAT_ALAC_20: "alac",
            SF_FORMAT_ALAC_24: "alac", SF_FORMAT_ALAC_32: "alac", SF_FORMAT_MPEG_LAYER_I: "mp1",
            SF_FORMAT_MPEG_LAYER_II: "mp2", SF_FORMAT_MPEG_LAYER_III: "mp3",
        ]
        if let name = names[Int(subtype)] { return name }
        var info = SF_FORMAT_INFO(format: subtype, name: nil, extension: nil)
        guard sf_command(file, Int32(SFC_GET_FORMAT_INFO), &info, Int32(MemoryLayout<SF_FORMAT_INFO>.size)) == 0,
              let name = info.name else {
            return "sndfile-\(String(subtype, radix: 16))"
        }
        return String(cString: name).lowercased()
    }

    private static func bitrate(subtype: Int32, rate: Int, channels: Int, frames: Int64?, byteCount: Int64) -> Int? {
        let bitsPerSample: [Int: Int] = [
            SF_FORMAT_PCM_S8: 8, SF_FORMAT_PCM_U8: 8, SF_FORMAT_PCM_16: 16,
            SF_FORMAT_PCM_24: 24, SF_FORMAT_PCM_32: 32, SF_FORMAT_FLOAT: 32,
            SF_FORMAT_DOUBLE: 64, SF_FORMAT_ULAW: 8, SF_FORMAT_ALAW: 8,
        ]
        if let bits = bitsPerSample[Int(subtype)] { return bits * rate * channels }
        guard let frames, frames > 0 else { return nil }
        return Int(Double(byteCount) * 8 / (Double(frames) / Double(rate)))
    }

    private static func tags(_ file: OpaquePointer) -> AudioTags {
        func string(_ kind: Int) -> String? {
            guard let text = sf_get_string(file, Int32(kind)) else { return nil }
            return TagText.clean(UnsafeRawBufferPointer(start: text, count: strlen(text)))
        }
        return AudioTags(
            title: string(SF_STR_TITLE), artist: string(SF_STR_ARTIST),
            album: string(SF_STR_ALBUM), genre: string(SF_STR_GENRE),
            year: TagText.year(string(SF_STR_DATE))
        ).bounded()
    }
}
