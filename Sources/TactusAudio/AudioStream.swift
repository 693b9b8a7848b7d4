/// A song being decoded: pull mono float blocks in [-1, 1] at ``sampleRate`` (the file's
/// sample rate unless ``DecodingOptions/minimumSampleRate`` lets the decoder lower it) until
/// the end, in bounded memory whatever the song's length.
///
/// Opening reads the header: the format is recognised from the content (never the file
/// name), ``metadata`` describes the song with an estimated duration, and a header that
/// announces more than ``DecodingOptions/maximumSeconds`` fails at once with `too-long`.
/// Reading delivers the channels' average, sample by sample, clamped to [-1, 1] (NaN as
/// silence), so every block is finite. The last read checks the length (`too-short`,
/// `truncated`) and makes ``metadata``'s duration exact.
///
/// ```swift
/// let stream = try AudioStream(.file(path))
/// let session = detector.makeSession(format: SignalFormat(
///     sampleRate: Double(stream.sampleRate), expectedFrames: stream.expectedFrames))
/// while try stream.readBlock({ session.consume($0) }) {}
/// print(stream.metadata.duration, stream.warnings)
/// ```
///
/// A stream is used from one thread at a time; errors are ``AudioError``s.
public final class AudioStream {
    /// What is known about the song; the duration is exact once the stream has ended.
    public private(set) var metadata: AudioMetadata
    /// The rate of the samples delivered: ``AudioMetadata/sampleRate``, or less when the
    /// options let the decoder lower it natively (``DecodingOptions/minimumSampleRate``).
    public let sampleRate: Int
    /// The number of samples (at ``sampleRate``) the song should have, when known (and plausible for the file's
    /// size): from the header (WAV, FLAC, Xing/Info), the last Ogg page, or a scan of the MPEG
    /// frame headers. Detectors use it to find the song's middle; the true count can differ
    /// a little (see ``framesDecoded``).
    public let expectedFrames: Int?
    /// Warnings so far (a truncated file, once the end is reached).
    public private(set) var warnings: [AudioWarning] = []
    /// Samples delivered so far.
    public private(set) var framesDecoded = 0
    /// True once the last block has been delivered (or decoding failed).
    public private(set) var isFinished = false
    /// The file path or the name of the in-memory bytes.
    public let name: String

    private let decoder: any FrameDecoder
    /// What the decoder reads through: a read error it met decides the error, whatever the
    /// decoder made of the missing bytes.
    private let reader: ByteReader
    private let options: DecodingOptions
    private let maximumFrames: Int
    private var mono: [Float]
    /// The step that ended the stream (its end, or the decoder's failure) while a block was
    /// being gathered: the block is delivered first, the ending at the next read.
    private var ending: DecodeStep?

    /// The lowest sample rate taken (telephone audio has 8,000 Hz). Below it nothing of a beat
    /// survives; and a 7 KB file declaring 1 Hz is 7,000 s long, each second costing the
    /// detectors as much as one of a real song (attack round 6: 8.5 s and 850 MB of a worker).
    public static let minimumSampleRate = 4_000

    /// The most channels of an Ogg stream (Vorbis, Opus) taken: music has at most 8 (7.1 sound),
    /// and a compressed stream's cost grows with its channels, not its size (a 1 MB Vorbis file
    /// declaring 255 channels took 7 s to decode instead of 0.1 s: attack round 7). PCM files,
    /// whose size grows with their channels, keep libsndfile's own limit.
    public static let maximumOggChannels = 8

    /// Opens `source` and reads its header.
    ///
    /// - Throws: `empty`, `unreadable` (also when a read fails), `unsupported-format` (also for a sample rate below
    ///   ``minimumSampleRate``), `corrupt`, or `too-long` when the header announces more than
    ///   `options.maximumSeconds`.
    public init(_ source: AudioSource, options: DecodingOptions = .standard) throws(AudioError) {
        let reader = try ByteReader(source)
        self.reader = reader
        name = reader.name
        self.options = options
        guard reader.length > 0 else { throw .empty(file: reader.name) }
        let recognized = FormatRecognizer.recognize(reader)
        do {
            switch recognized {
            case .mpeg(let hasFrameCount):
                decoder = try MPG123Decoder(reader: reader, hasFrameCount: hasFrameCount, minimumRate: options.minimumSampleRate)
            default:
                decoder = try SndFileDecoder(reader: reader, recognized: recognized, blockFrames: options.blockFrames)
            }
        } catch {
            throw reader.readError ?? error
        }
        if let failed = reader.readError { throw failed }
        let stream = decoder.stream
        guard stream.sampleRate >= Self.minimumSampleRate else {
            throw .unsupportedFormat(
                file: reader.name,
                detail: "a sample rate of \(stream.sampleRate) Hz; Tactus analyses audio sampled at \(Self.minimumSampleRate) Hz or more")
        }
        guard stream.format != .ogg || stream.channels <= Self.maximumOggChannels else {
            throw .unsupportedFormat(
                file: reader.name,
                detail: "an Ogg stream of \(stream.channels) channels; Tactus analyses Ogg streams of at most \(Self.maximumOggChannels)")
        }
        sampleRate = stream.outputRate
        let rate = Double(stream.outputRate)
        let estimatedSeconds = stream.estimatedFrames.map { Double($0) / rate }
        if let estimatedSeconds, estimatedSeconds > options.maximumSeconds {
            throw .tooLong(file: name, seconds: estimatedSeconds, maximumSeconds: options.maximumSeconds, estimated: true)
        }
        expectedFrames = stream.estimatedFrames.map { Int($0) }
        let limit = options.maximumSeconds * rate
        maximumFrames = limit < Double(Int.max / 2) ? Int(max(limit, 0)) : Int.max / 2
        metadata = AudioMetadata(
            format: stream.format, codec: stream.codec, sampleRate: stream.sampleRate, channels: stream.channels,
            duration: estimatedSeconds ?? 0, durationIsExact: false, bitrate: stream.bitrate, tags: stream.tags)
        mono = [Float](repeating: 0, count: options.blockFrames)
    }

    /// Decodes the next block and hands it to `body`; returns false (without calling `body`)
    /// once the song has ended. The block is only valid inside `body`.
    ///
    /// A block gathers the decoder's frames until it holds at least
    /// ``DecodingOptions/blockFrames`` samples (or the song ends): an MP3 frame is 1,152
    /// samples, and the fewer the blocks, the less each detector spends per call.
    ///
    /// - Throws: `too-long` once more than the maximum has been decoded; at the end,
    ///   `unreadable` (a read failed: the song is not judged on part of its data),
    ///   `too-short`, `truncated` (less than the minimum before the data ran out) or
    ///   `corrupt` (the decoder failed before any audio).
    public func readBlock(_ body: (UnsafeBufferPointer<Float>) -> Void) throws(AudioError) -> Bool {
        guard let filled = try gatherBlock() else { return false }
        mono.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[0..<filled])) }
        return true
    }

    /// Decodes the next block into `buffer` and returns its length, or nil (leaving `buffer`
    /// alone) once the song has ended: as ``readBlock(_:)``, but the block is not copied, the
    /// stream's storage and `buffer`'s are exchanged instead. Past the block's length, `buffer`
    /// holds nothing of use.
    public func readBlock(into buffer: inout [Float]) throws(AudioError) -> Int? {
        guard let filled = try gatherBlock() else { return nil }
        swap(&mono, &buffer)
        if mono.count < options.blockFrames { mono = [Float](repeating: 0, count: options.blockFrames) }
        return filled
    }

    /// Decodes the next block into ``mono`` and returns its length, or nil once the song has ended.
    private func gatherBlock() throws(AudioError) -> Int? {
        guard !isFinished else { return nil }
        var filled = 0
        while filled < options.blockFrames, ending == nil {
            let step = mono.withUnsafeMutableBufferPointer { decoder.next(into: UnsafeMutableBufferPointer(rebasing: $0[filled..<options.blockFrames])) }
            let frames: Int
            switch step {
            case .frames(let interleaved, let channels): frames = interleaved.count / channels
            case .mono(let count): frames = count
            case .end, .failure:
                ending = step
                continue
            }
            guard framesDecoded + filled + frames <= maximumFrames else {
                isFinished = true
                throw .tooLong(
                    file: name, seconds: seconds(framesDecoded + filled + frames), maximumSeconds: options.maximumSeconds,
                    estimated: false)
            }
            if case .frames(let interleaved, let channels) = step {
                if mono.count < filled + frames { mono.append(contentsOf: repeatElement(0, count: filled + frames - mono.count)) }
                mono.withUnsafeMutableBufferPointer { all in
                    Self.downmix(interleaved, channels: channels, into: UnsafeMutableBufferPointer(rebasing: all[filled...]))
                }
            }
            filled += frames
        }
        if filled > 0 {
            framesDecoded += filled
            return filled
        }
        if case .failure(let message) = ending {
            try finish(failure: message)
        } else {
            try finish(failure: nil)
        }
        return nil
    }

    /// The next block as an array, or nil at the end (a copying convenience over ``readBlock(_:)``).
    public func nextBlock() throws(AudioError) -> [Float]? {
        var block: [Float]?
        _ = try readBlock { block = Array($0) }
        return block
    }

    /// Reads the rest of the song and returns it whole. Memory grows with the song's length:
    /// analysis should stream with ``readBlock(_:)`` instead.
    public func readAll() throws(AudioError) -> DecodedAudio {
        var samples: [Float] = []
        if let expectedFrames { samples.reserveCapacity(min(expectedFrames, maximumFrames) + 4096) }
        while try readBlock({ samples.append(contentsOf: $0) }) {}
        return DecodedAudio(samples: samples, metadata: metadata, warnings: warnings, sampleRate: sampleRate)
    }

    /// Decodes the rest of the song without keeping the samples: afterwards ``metadata``
    /// has the exact duration and ``warnings`` are complete.
    public func readToEnd() throws(AudioError) {
        while try readBlock({ _ in }) {}
    }

    // MARK: The end of the stream

    private func finish(failure: String?) throws(AudioError) {
        isFinished = true
        if let failed = reader.readError { throw failed }
        let decoded = seconds(framesDecoded)
        if let failure, framesDecoded == 0 {
            throw .corrupt(file: name, decoderMessage: failure)
        }
        var reason = failure ?? decoder.stream.truncation
        let promised = decoder.stream.promisedFrames
        let tolerance = metadata.format == .mpeg ? 1152 : 1
        if reason == nil, let promised, Int64(framesDecoded) + Int64(tolerance) < promised {
            reason = "the data ends early"
        }
        if let reason {
            guard decoded >= options.minimumSeconds else {
                throw .truncated(file: name, decodedSeconds: decoded, reason: reason)
            }
            warnings.append(.truncated(
                decodedSeconds: decoded, expectedSeconds: promised.map { seconds(Int($0)) }, reason: reason))
        } else if decoded < options.minimumSeconds {
            throw .tooShort(file: name, seconds: decoded, minimumSeconds: options.minimumSeconds)
        }
        metadata.duration = decoded
        metadata.durationIsExact = true
    }

    private func seconds(_ frames: Int) -> Double {
        Double(frames) / Double(sampleRate)
    }

    /// Averages the channels of each frame and clamps to [-1, 1] (NaN becomes 0).
    static func downmix(_ interleaved: UnsafeBufferPointer<Float>, channels: Int, into mono: UnsafeMutableBufferPointer<Float>) {
        @inline(__always) func clamp(_ x: Float) -> Float {
            x >= -1 ? (x <= 1 ? x : 1) : (x < -1 ? -1 : 0)
        }
        let frames = interleaved.count / channels
        switch channels {
        case 1:
            for index in 0..<frames { mono[index] = clamp(interleaved[index]) }
        case 2:
            for index in 0..<frames {
                mono[index] = clamp((interleaved[2 * index] + interleaved[2 * index + 1]) * 0.5)
            }
        default:
            let scale = 1 / Float(channels)
            for index in 0..<frames {
                var sum: Float = 0
                for channel in 0..<channels { sum += interleaved[index * channels + channel] }
                mono[index] = clamp(sum * scale)
            }
        }
    }
}

/// A whole decoded song: the mono signal, its metadata (exact duration) and any warnings.
public struct DecodedAudio: Sendable {
    /// Mono samples in [-1, 1] at ``sampleRate``.
    public var samples: [Float]
    public var metadata: AudioMetadata
    public var warnings: [AudioWarning]
    /// The samples' rate: ``AudioMetadata/sampleRate`` unless the decoding options let the
    /// decoder lower it.
    public var sampleRate: Int

    /// Decodes the whole of `source` into memory.
    public init(decoding source: AudioSource, options: DecodingOptions = .standard) throws(AudioError) {
        self = try AudioStream(source, options: options).readAll()
    }

    /// A decoded song from its parts (a synthesised signal, for example); `sampleRate`
    /// defaults to the metadata's.
    public init(samples: [Float], metadata: AudioMetadata, warnings: [AudioWarning] = [], sampleRate: Int? = nil) {
        self.samples = samples
        self.metadata = metadata
        self.warnings = warnings
        self.sampleRate = sampleRate ?? metadata.sampleRate
    }
}
