/// What the first bytes of a source say it is. Recognition is by content only: magic
/// bytes, and for MPEG audio a chain of frame headers each found where the previous one
/// predicts (so random bytes are not taken for MP3).
enum RecognizedContent: Equatable {
    /// MPEG audio, to be decoded by libmpg123. `hasFrameCount` is true when a Xing/Info tag
    /// gives the exact number of frames (so a shortfall means the file was cut).
    case mpeg(hasFrameCount: Bool)
    /// A container libsndfile reads; `oggCodec` names the codec of an Ogg stream's first
    /// packet (nil for other containers, or "unknown").
    case sndfile(AudioFormat, oggCodec: String?)
    /// A RIFF WAVE file: `claimedFrames` is what its data chunk announces, nil when the size
    /// is a placeholder (0, 0xFFFFFFFF or sox's 0x7FFFF000, as writers to pipes leave it) or
    /// not found; `declared` the channels and sample rate of its fmt chunk, if it has one
    /// (to say what is wrong with a header libsndfile refuses).
    case wav(claimedFrames: Int64?, declared: WAVFormat? = nil)
    /// Nothing recognised: libsndfile is tried as a last resort.
    case unknown
}

/// What a WAV file's fmt chunk declares.
struct WAVFormat: Equatable {
    var channels: Int
    var sampleRate: Int64
}

/// Recognises the format of a source from its content.
enum FormatRecognizer {
    /// How many bytes of garbage may precede the first MPEG frame (after any ID3v2 tag).
    static let mpegGarbageLimit = 64 * 1024
    /// How many consecutive frames must chain for bytes to count as MPEG audio.
    static let mpegChainLength = 3
    /// How many frames must chain when junk lies between them (libmpg123 resynchronises over
    /// it): more than ``mpegChainLength``, so that random bytes are still not taken for MP3.
    static let mpegResyncChainLength = 6
    /// How many junk bytes may lie between one frame's end and the next frame's header.
    static let mpegResyncGap = 256

    static func recognize(_ reader: ByteReader) -> RecognizedContent {
        let head = reader.bytes(at: 0, count: 64)
        if head.starts(with: Array("RIFF".utf8)), head.count >= 12, head[8..<12].elementsEqual("WAVE".utf8) {
            return wavClaims(reader)
        }
        if head.starts(with: Array("RF64".utf8)) { return .sndfile(.rf64, oggCodec: nil) }
        if head.starts(with: Array("FORM".utf8)), head.count >= 12,
           head[8..<12].elementsEqual("AIFF".utf8) || head[8..<12].elementsEqual("AIFC".utf8) {
            return .sndfile(.aiff, oggCodec: nil)
        }
        if head.starts(with: Array("fLaC".utf8)) { return .sndfile(.flac, oggCodec: nil) }
        if head.starts(with: Array("OggS".utf8)) { return .sndfile(.ogg, oggCodec: oggCodec(head: reader.bytes(at: 0, count: 512))) }

        var start: Int64 = 0
        if head.starts(with: Array("ID3".utf8)), head.count >= 10 {
            let size = head[6..<10].reduce(Int64(0)) { ($0 << 7) | Int64($1 & 0x7F) }
            start = 10 + size + (head[5] & 0x10 != 0 ? 10 : 0)
            let afterTag = reader.bytes(at: start, count: 4)
            if afterTag.starts(with: Array("fLaC".utf8)) { return .sndfile(.flac, oggCodec: nil) }
        }
        if let mpeg = mpegStream(reader, from: start) { return mpeg }
        return .unknown
    }

    /// The first MPEG frame at or after `start` that begins a chain of compatible frames: each
    /// where the one before predicts, or, failing that anywhere in the window, a longer chain
    /// with a little junk between frames.
    private static func mpegStream(_ reader: ByteReader, from start: Int64) -> RecognizedContent? {
        let window = reader.bytes(at: start, count: mpegGarbageLimit + 8 * 1024)
        let end = reader.length - start  // the stream's end, relative to `start`
        if let strict = strictMPEGChain(window, end: end) { return strict }
        return resyncedMPEGChain(window)
    }

    /// The first frame that begins a chain of ``mpegChainLength`` compatible frames, each
    /// exactly where the one before ends (or fewer ending exactly at the stream's `end`).
    private static func strictMPEGChain(_ window: [UInt8], end: Int64) -> RecognizedContent? {
        var offset = 0
        while offset + 4 <= min(window.count, mpegGarbageLimit) {
            guard window[offset] == 0xFF, let first = MPEGFrameHeader(window[offset...]) else {
                offset += 1
                continue
            }
            var next = offset + first.frameLength
            var chained = 1
            while chained < mpegChainLength {
                if Int64(next) == end { break }  // a short stream that ends on a frame boundary
                guard next + 4 <= window.count, let header = MPEGFrameHeader(window[next...]),
                      first.isCompatible(with: header) else { break }
                chained += 1
                next += header.frameLength
            }
            if chained == mpegChainLength || (Int64(next) == end && chained > 1) {
                return .mpeg(hasFrameCount: hasXingFrameCount(window[offset...], header: first))
            }
            offset += 1
        }
        return nil
    }

    /// The first frame that begins a chain of ``mpegResyncChainLength`` compatible frames, each
    /// found at most ``mpegResyncGap`` bytes after the end of the one before.
    private static func resyncedMPEGChain(_ window: [UInt8]) -> RecognizedContent? {
        var offset = 0
        while offset + 4 <= min(window.count, mpegGarbageLimit) {
            guard window[offset] == 0xFF, let first = MPEGFrameHeader(window[offset...]) else {
                offset += 1
                continue
            }
            var next = offset + first.frameLength
            var chained = 1
            while chained < mpegResyncChainLength, let found = compatibleHeader(in: window, from: next, like: first) {
                chained += 1
                next = found.offset + found.header.frameLength
            }
            if chained == mpegResyncChainLength {
                return .mpeg(hasFrameCount: hasXingFrameCount(window[offset...], header: first))
            }
            offset += 1
        }
        return nil
    }

    /// The first header compatible with `first` within ``mpegResyncGap`` bytes from `start`.
    private static func compatibleHeader(
        in window: [UInt8], from start: Int, like first: MPEGFrameHeader
    ) -> (offset: Int, header: MPEGFrameHeader)? {
        var candidate = start
        while candidate <= start + mpegResyncGap, candidate + 4 <= window.count {
            if window[candidate] == 0xFF, let header = MPEGFrameHeader(window[candidate...]), first.isCompatible(with: header) {
                return (candidate, header)
            }
            candidate += 1
        }
        return nil
    }

    /// Whether the frame starting `frame` is a Xing/Info tag carrying the frame count.
    private static func hasXingFrameCount(_ frame: ArraySlice<UInt8>, header: MPEGFrameHeader) -> Bool {
        let tag = frame.startIndex + header.xingOffset
        guard header.layer == 3, tag + 8 <= frame.endIndex else { return false }
        let magic = frame[tag..<tag + 4]
        guard magic.elementsEqual("Xing".utf8) || magic.elementsEqual("Info".utf8) else { return false }
        return frame[tag + 7] & 1 != 0
    }

    /// The codec of the first packet of an Ogg stream.
    private static func oggCodec(head: [UInt8]) -> String {
        guard head.count > 27 else { return "unknown" }
        let segments = Int(head[26])
        let packet = head.dropFirst(27 + segments)
        if packet.starts(with: [0x01] + Array("vorbis".utf8)) { return "vorbis" }
        if packet.starts(with: Array("OpusHead".utf8)) { return "opus" }
        if packet.starts(with: [0x7F] + Array("FLAC".utf8)) { return "flac" }
        if packet.starts(with: Array("Speex   ".utf8)) { return "speex" }
        return "unknown"
    }

    /// Walks the RIFF chunks to the data chunk to learn how many frames the header claims.
    private static func wavClaims(_ reader: ByteReader) -> RecognizedContent {
        var offset: Int64 = 12
        var blockAlign: Int64?
        var declared: WAVFormat?
        for _ in 0..<64 {
            let chunk = reader.bytes(at: offset, count: 24)
            guard chunk.count >= 8 else { break }
            let size = Int64(chunk[4]) | Int64(chunk[5]) << 8 | Int64(chunk[6]) << 16 | Int64(chunk[7]) << 24
            if chunk.starts(with: Array("fmt ".utf8)), chunk.count >= 22 {
                blockAlign = Int64(chunk[20]) | Int64(chunk[21]) << 8
                declared = WAVFormat(
                    channels: Int(chunk[10]) | Int(chunk[11]) << 8,
                    sampleRate: Int64(chunk[12]) | Int64(chunk[13]) << 8 | Int64(chunk[14]) << 16 | Int64(chunk[15]) << 24)
            }
            if chunk.starts(with: Array("data".utf8)) {
                guard let blockAlign, blockAlign > 0 else { break }
                let claimed: Int64? = [0, 0x7FFF_F000, 0xFFFF_FFFF].contains(size) ? nil : size / blockAlign
                return .wav(claimedFrames: claimed, declared: declared)
            }
            offset += 8 + size + (size & 1)
        }
        return .wav(claimedFrames: nil, declared: declared)
    }
}
