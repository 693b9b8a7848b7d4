import CSndFile
import Foundation
import TactusAudio
import TactusModel

/// Writes synthesised audio through libsndfile, to a file or to bytes in memory, in the
/// formats Tactus reads: WAV (16-bit, 24-bit, 32/64-bit float, WAVE_FORMAT_EXTENSIBLE), AIFF, FLAC, Ogg Vorbis, Opus and MP3
/// (libsndfile's LAME support), with string tags.
///
/// ```swift
/// let signal = Synth.drumPattern(bpm: 120, seconds: 8, sampleRate: 44100)
/// try AudioFileWriter(.mp3(.variable)).write([signal], sampleRate: 44100, to: "/tmp/loop.mp3")
/// let bytes = try AudioFileWriter(.flac).encode([left, right], sampleRate: 48000)
/// ```
public struct AudioFileWriter: Sendable {
    /// The container and encoding to write.
    public enum Format: Hashable, Sendable, CaseIterable {
        case wav16, wav24, wavFloat, wavDouble
        /// WAVE_FORMAT_EXTENSIBLE, 16-bit.
        case wavExtensible16
        case aiff, flac, oggVorbis, opus
        case mp3(MP3BitrateMode)

        public static let allCases: [Format] = [
            .wav16, .wav24, .wavFloat, .wavDouble, .wavExtensible16, .aiff, .flac, .oggVorbis, .opus,
            .mp3(.constant), .mp3(.variable),
        ]

        var sndfileFormat: Int32 {
            let value = switch self {
            case .wav16: SF_FORMAT_WAV | SF_FORMAT_PCM_16
            case .wav24: SF_FORMAT_WAV | SF_FORMAT_PCM_24
            case .wavFloat: SF_FORMAT_WAV | SF_FORMAT_FLOAT
            case .wavDouble: SF_FORMAT_WAV | SF_FORMAT_DOUBLE
            case .wavExtensible16: SF_FORMAT_WAVEX | SF_FORMAT_PCM_16
            case .aiff: SF_FORMAT_AIFF | SF_FORMAT_PCM_16
            case .flac: SF_FORMAT_FLAC | SF_FORMAT_PCM_16
            case .oggVorbis: SF_FORMAT_OGG | SF_FORMAT_VORBIS
            case .opus: SF_FORMAT_OGG | SF_FORMAT_OPUS
            case .mp3: SF_FORMAT_MPEG | SF_FORMAT_MPEG_LAYER_III
            }
            return Int32(truncatingIfNeeded: value)
        }
    }

    /// How LAME spends bits in an MP3.
    public enum MP3BitrateMode: Hashable, Sendable {
        case constant, variable
    }

    /// Why writing failed: libsndfile's message.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public var format: Format
    public var tags: AudioTags
    /// libsndfile's compression level, 0 (best quality, largest) to 1 (smallest); nil for
    /// libsndfile's default. For MP3 this chooses the bitrate.
    public var compressionLevel: Double?

    public init(_ format: Format, tags: AudioTags = AudioTags(), compressionLevel: Double? = nil) {
        self.format = format
        self.tags = tags
        self.compressionLevel = compressionLevel
    }

    /// Whether the system libsndfile can write `format` with these channels and rate
    /// (Opus, for one, only takes 8, 12, 16, 24 and 48 kHz).
    public static func canWrite(_ format: Format, channels: Int, sampleRate: Int) -> Bool {
        var info = SF_INFO(frames: 0, samplerate: Int32(sampleRate), channels: Int32(channels), format: format.sndfileFormat, sections: 0, seekable: 0)
        return sf_format_check(&info) == SF_TRUE
    }

    /// Writes `channels` (one array per channel, equal lengths) to a file at `path`.
    public func write(_ channels: [[Float]], sampleRate: Int, to path: String) throws(Failure) {
        let output = MemoryOutput()
        try encode(channels, sampleRate: sampleRate, into: output)
        guard FileManager.default.createFile(atPath: path, contents: Data(output.bytes)) else {
            throw Failure(description: "\(path): cannot create the file")
        }
    }

    /// Encodes `channels` (one array per channel, equal lengths) into the bytes of a file.
    public func encode(_ channels: [[Float]], sampleRate: Int) throws(Failure) -> [UInt8] {
        let output = MemoryOutput()
        try encode(channels, sampleRate: sampleRate, into: output)
        return output.bytes
    }

    private func encode(_ channels: [[Float]], sampleRate: Int, into output: MemoryOutput) throws(Failure) {
        guard !channels.isEmpty else { throw Failure(description: "no channels to write") }
        var info = SF_INFO(frames: 0, samplerate: Int32(sampleRate), channels: Int32(channels.count), format: format.sndfileFormat, sections: 0, seekable: 0)
        var io = MemoryOutput.virtualIO
        guard let file = sf_open_virtual(&io, Int32(SFM_WRITE), &info, Unmanaged.passUnretained(output).toOpaque()) else {
            throw Failure(description: "libsndfile cannot write \(format) at \(sampleRate) Hz, \(channels.count) channels: \(String(cString: sf_strerror(nil)))")
        }
        defer { sf_close(file) }
        if case .mp3(let mode) = format {
            var value: Int32 = Int32(mode == .constant ? SF_BITRATE_MODE_CONSTANT : SF_BITRATE_MODE_VARIABLE)
            _ = sf_command(file, Int32(SFC_SET_BITRATE_MODE), &value, Int32(MemoryLayout<Int32>.size))
        }
        if var level = compressionLevel {
            _ = sf_command(file, Int32(SFC_SET_COMPRESSION_LEVEL), &level, Int32(MemoryLayout<Double>.size))
        }
        let strings: [(Int, String?)] = [
            (SF_STR_TITLE, tags.title), (SF_STR_ARTIST, tags.artist),
            (SF_STR_ALBUM, tags.album), (SF_STR_GENRE, tags.genre),
            (SF_STR_DATE, tags.year.map(String.init)),
        ]
        for case (let kind, let text?) in strings where sf_set_string(file, Int32(kind), text) != 0 {
            throw Failure(description: "libsndfile cannot store tag \(kind) in \(format): \(String(cString: sf_strerror(file)))")
        }
        let interleaved = Synth.interleave(channels)
        let frames = interleaved.count / channels.count
        let written = interleaved.withUnsafeBufferPointer { sf_writef_float(file, $0.baseAddress, sf_count_t(frames)) }
        guard written == frames else {
            throw Failure(description: "libsndfile wrote \(written) of \(frames) frames: \(String(cString: sf_strerror(file)))")
        }
    }
}

/// A growable in-memory file behind libsndfile's virtual I/O.
private final class MemoryOutput {
    var bytes: [UInt8] = []
    var position = 0

    static var virtualIO: SF_VIRTUAL_IO {
        SF_VIRTUAL_IO(
            get_filelen: { sf_count_t(MemoryOutput.from($0).bytes.count) },
            seek: { offset, whence, context in
                let output = MemoryOutput.from(context)
                let base = switch whence {
                case SEEK_CUR: output.position
                case SEEK_END: output.bytes.count
                default: 0
                }
                guard base + Int(offset) >= 0 else { return -1 }
                output.position = base + Int(offset)
                return sf_count_t(output.position)
            },
            read: { buffer, count, context in
                let output = MemoryOutput.from(context)
                let available = max(0, min(Int(count), output.bytes.count - output.position))
                guard let buffer, available > 0 else { return 0 }
                output.bytes.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress! + output.position, byteCount: available) }
                output.position += available
                return sf_count_t(available)
            },
            write: { buffer, count, context in
                let output = MemoryOutput.from(context)
                guard let buffer, count > 0 else { return 0 }
                let end = output.position + Int(count)
                if output.position == output.bytes.count {
                    // Appending, as libsndfile does but for its header: one copy.
                    output.bytes.append(contentsOf: UnsafeRawBufferPointer(start: buffer, count: Int(count)))
                    output.position = end
                    return count
                }
                if end > output.bytes.count {
                    output.bytes.append(contentsOf: repeatElement(0, count: end - output.bytes.count))
                }
                output.bytes.withUnsafeMutableBytes { ($0.baseAddress! + output.position).copyMemory(from: buffer, byteCount: Int(count)) }
                output.position = end
                return count
            },
            tell: { sf_count_t(MemoryOutput.from($0).position) })
    }

    static func from(_ context: UnsafeMutableRawPointer?) -> MemoryOutput {
        Unmanaged<MemoryOutput>.fromOpaque(context!).takeUnretainedValue()
    }
}
