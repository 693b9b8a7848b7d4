import TactusModel

/// The container (file format) of a song, as recognised from its content.
///
/// The common formats have constants; a format that only libsndfile knows gets a short name
/// derived from libsndfile's own (for example `"au"` or `"w64"`).
public struct AudioFormat: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// An MPEG audio elementary stream (MP3, MP2), with or without ID3/APE tags.
    public static let mpeg = AudioFormat(rawValue: "mpeg")
    /// RIFF WAVE, including WAVE_FORMAT_EXTENSIBLE.
    public static let wav = AudioFormat(rawValue: "wav")
    /// RF64 (WAVE beyond 4 GB).
    public static let rf64 = AudioFormat(rawValue: "rf64")
    /// AIFF and AIFF-C.
    public static let aiff = AudioFormat(rawValue: "aiff")
    /// Native FLAC.
    public static let flac = AudioFormat(rawValue: "flac")
    /// Ogg (Vorbis, Opus or FLAC inside: see ``AudioMetadata/codec``).
    public static let ogg = AudioFormat(rawValue: "ogg")

    public var description: String { rawValue }
}

/// What is known about a song: format, codec, signal shape, duration, bitrate and tags.
///
/// Before decoding, ``duration`` is the header's estimate (``durationIsExact`` is false);
/// once an ``AudioStream`` has been read to the end, its metadata carries the exact duration
/// of the decoded signal.
public struct AudioMetadata: Hashable, Sendable, Codable {
    /// The container.
    public var format: AudioFormat
    /// The encoding inside the container: `mp3`, `mp2`, `mp1`, `flac`, `vorbis`, `opus`,
    /// `pcm-s16`, `pcm-s24`, `pcm-s32`, `pcm-u8`, `pcm-s8`, `pcm-f32`, `pcm-f64`, `ulaw`,
    /// `alaw`, `ima-adpcm`, `ms-adpcm`..., or libsndfile's name for rarer ones.
    public var codec: String
    /// Samples per second per channel; also the rate of the decoded mono signal.
    public var sampleRate: Int
    /// The channels in the file (the decoded signal is always mono: their average).
    public var channels: Int
    /// Seconds of audio: the header's estimate until decoded (0 when the header does not
    /// say), then exact.
    public var duration: Double
    /// Whether ``duration`` was measured by decoding the whole song.
    public var durationIsExact: Bool
    /// Average bits per second of the encoded audio, when known (nominal for PCM and CBR MP3,
    /// the file size over the duration otherwise).
    public var bitrate: Int?
    /// Title, artist, album, genre, year.
    public var tags: AudioTags

    public init(
        format: AudioFormat, codec: String, sampleRate: Int, channels: Int, duration: Double,
        durationIsExact: Bool, bitrate: Int?, tags: AudioTags
    ) {
        self.format = format
        self.codec = codec
        self.sampleRate = sampleRate
        self.channels = channels
        self.duration = duration
        self.durationIsExact = durationIsExact
        self.bitrate = bitrate
        self.tags = tags
    }
}

/// The limits applied while decoding.
public struct DecodingOptions: Hashable, Sendable {
    /// Songs with less decoded audio fail with `too-short`. Default 5 s.
    public var minimumSeconds: Double
    /// Songs with more audio fail with `too-long`: checked against the header before
    /// decoding, and decoding stops once past it. Default 2 hours.
    public var maximumSeconds: Double
    /// The fewest samples per block delivered by ``AudioStream``, except the last block: the
    /// decoder's frames are gathered until a block holds at least this many, so a block may
    /// hold up to one decoder frame more (an MP3 frame is 1,152 samples). Default 4096; kept
    /// within 64...65536.
    public var blockFrames: Int
    /// The lowest sample rate the analysis needs, or nil for the file's own rate. When it is
    /// set, a decoder that lowers the rate natively and cheaply delivers the lowest such rate
    /// at or above it: libmpg123 synthesises MPEG audio at 1/2 or 1/4 of its rate, leaving out
    /// the sub-bands above the new Nyquist frequency. Other formats keep their rate (a
    /// detector resamples what it needs with libsoxr). ``AudioStream/sampleRate`` is the rate
    /// delivered; ``AudioMetadata/sampleRate`` stays the file's.
    public var minimumSampleRate: Double?
    /// Whether a song being analysed is decoded on a thread of its own, a few blocks ahead of
    /// the detectors (``ReadAheadStream``): one song's analysis then takes about the longer of
    /// decoding and detection, not their sum, at some 5 % more CPU (the hand-over of blocks
    /// between cores). Worth it where a core would otherwise be idle; not where every core
    /// already analyses a song of its own. Default true.
    public var readAhead: Bool

    public init(
        minimumSeconds: Double = 5, maximumSeconds: Double = 7200, blockFrames: Int = 4096, minimumSampleRate: Double? = nil,
        readAhead: Bool = true
    ) {
        self.minimumSeconds = minimumSeconds
        self.maximumSeconds = maximumSeconds
        self.blockFrames = min(max(blockFrames, 64), 65536)
        self.minimumSampleRate = minimumSampleRate
        self.readAhead = readAhead
    }

    /// 5 s to 2 hours, blocks of 4096 samples, decoded ahead.
    public static let standard = DecodingOptions()
}
