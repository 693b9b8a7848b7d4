/// The four-byte header that starts every MPEG audio frame, decoded far enough to find where
/// the next frame starts. Used to recognise MPEG audio from its content; decoding itself is
/// libmpg123's job.
struct MPEGFrameHeader: Equatable {
    enum Version: Equatable {
        case mpeg1, mpeg2, mpeg25
    }

    let version: Version
    /// 1, 2 or 3.
    let layer: Int
    let bitrateKbps: Int
    let sampleRate: Int
    let padding: Bool
    let isMono: Bool

    /// Parses the header at the start of `bytes`; nil unless it is a valid header with a
    /// known bitrate (free-format streams are not recognised).
    init?(_ bytes: ArraySlice<UInt8>) {
        guard bytes.count >= 4 else { return nil }
        let b0 = bytes[bytes.startIndex], b1 = bytes[bytes.startIndex + 1]
        let b2 = bytes[bytes.startIndex + 2], b3 = bytes[bytes.startIndex + 3]
        guard b0 == 0xFF, b1 & 0xE0 == 0xE0 else { return nil }
        switch (b1 >> 3) & 3 {
        case 0: version = .mpeg25
        case 2: version = .mpeg2
        case 3: version = .mpeg1
        default: return nil
        }
        let layerBits = Int((b1 >> 1) & 3)
        guard layerBits != 0 else { return nil }
        layer = 4 - layerBits
        let bitrateIndex = Int(b2 >> 4)
        guard bitrateIndex != 0, bitrateIndex != 15 else { return nil }
        let rateIndex = Int((b2 >> 2) & 3)
        guard rateIndex != 3, b3 & 3 != 2 else { return nil }
        let table: [Int]
        switch (version, layer) {
        case (.mpeg1, 1): table = [0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448]
        case (.mpeg1, 2): table = [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384]
        case (.mpeg1, _): table = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]
        case (_, 1): table = [0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256]
        default: table = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160]
        }
        bitrateKbps = table[bitrateIndex]
        let baseRate = [44100, 48000, 32000][rateIndex]
        sampleRate = switch version {
        case .mpeg1: baseRate
        case .mpeg2: baseRate / 2
        case .mpeg25: baseRate / 4
        }
        padding = (b2 >> 1) & 1 == 1
        isMono = b3 >> 6 == 3
    }

    /// The frame's length in bytes, header included.
    var frameLength: Int {
        let bitsPerSecond = bitrateKbps * 1000
        switch layer {
        case 1: return (12 * bitsPerSecond / sampleRate + (padding ? 1 : 0)) * 4
        case 2: return 144 * bitsPerSecond / sampleRate + (padding ? 1 : 0)
        default:
            let factor = version == .mpeg1 ? 144 : 72
            return factor * bitsPerSecond / sampleRate + (padding ? 1 : 0)
        }
    }

    /// Whether `other` can follow this header in the same stream.
    func isCompatible(with other: MPEGFrameHeader) -> Bool {
        version == other.version && layer == other.layer && sampleRate == other.sampleRate
    }

    /// Where a Xing/Info tag would start in this frame (after the header and side information).
    var xingOffset: Int {
        switch (version, isMono) {
        case (.mpeg1, false): 4 + 32
        case (.mpeg1, true), (_, false): 4 + 17
        case (_, true): 4 + 9
        }
    }
}
