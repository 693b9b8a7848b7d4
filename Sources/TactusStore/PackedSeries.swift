import Foundation
import TactusDetector

/// The layout of `analyses.windows`: the per-window series of an analysis.
///
/// Each window is 5 consecutive IEEE-754 32-bit floats, little-endian, 20 bytes in all:
///
/// | offset | field        | meaning                                               |
/// |-------:|--------------|-------------------------------------------------------|
/// |      0 | `start_s`    | window start, seconds from the start of the song      |
/// |      4 | `duration_s` | window length in seconds                              |
/// |      8 | `energy`     | mean of the squared samples (linear)                  |
/// |     12 | `bpm`        | the window's tempo, NaN when the window has none      |
/// |     16 | `strength`   | how clearly the window shows its tempo, in [0, 1]     |
///
/// Windows follow each other in time order with no header and no padding, so the BLOB's
/// length is 20 × the number of windows, and an empty series is an empty BLOB. Values are
/// rounded to float32 when stored.
public enum PackedWindows {
    /// Bytes per window.
    public static let stride = 20
    /// The most windows a series holds: 29 hours at ten a second (the built-in detectors step at
    /// least 0.5 s). A longer series is refused when stored and reads as none.
    public static let maximumWindows = 1 << 20

    public static func encode(_ windows: [AnalysisWindow]) -> Data {
        var floats = [Float]()
        floats.reserveCapacity(windows.count * 5)
        for window in windows {
            floats.append(Float(window.startS))
            floats.append(Float(window.durationS))
            floats.append(Float(window.energy))
            floats.append(window.bpm.map { Float($0) } ?? .nan)
            floats.append(Float(window.strength))
        }
        return FloatBlob.encode(floats)
    }

    /// Nil when the length is not a multiple of ``stride`` or holds over ``maximumWindows``.
    public static func decode(_ data: Data) -> [AnalysisWindow]? {
        guard data.count % stride == 0, data.count / stride <= maximumWindows else { return nil }
        let floats = FloatBlob.decode(data)
        var windows = [AnalysisWindow]()
        windows.reserveCapacity(floats.count / 5)
        for i in Swift.stride(from: 0, to: floats.count, by: 5) {
            let bpm: Double? = floats[i + 3].isNaN ? nil : Double(floats[i + 3])
            windows.append(
                AnalysisWindow(
                    startS: Double(floats[i]), durationS: Double(floats[i + 1]), energy: Double(floats[i + 2]),
                    bpm: bpm, strength: Double(floats[i + 4])))
        }
        return windows
    }
}

/// The layout of `songs.envelope`: the song's energy envelope, one IEEE-754 32-bit float per
/// block, little-endian, in time order, with no header (the hop between blocks is the
/// `songs.envelope_hop_s` column).
///
/// An envelope is stored only when it ``fits(_:durationS:)``, and one that does not (a library
/// file edited by hand) reads as none: a reader never decodes more than ``maximumValues``.
public enum PackedEnvelope {
    /// The most values an envelope holds: 27 hours at the analysis' 23.2 ms hop (16 MiB).
    public static let maximumValues = 1 << 22
    /// The hops an envelope may have, in seconds (as a worker may send them).
    public static let hops: ClosedRange<Double> = 1e-6...60

    public static func encode(_ envelope: EnergyEnvelope) -> Data {
        FloatBlob.encode(envelope.values)
    }

    /// Nil when the length is not a multiple of 4, or the envelope would not fit.
    public static func decode(_ data: Data, hopS: Double) -> EnergyEnvelope? {
        guard data.count % 4 == 0, data.count / 4 <= maximumValues, hops.contains(hopS) else { return nil }
        return EnergyEnvelope(hopS: hopS, values: FloatBlob.decode(data))
    }

    /// Whether `envelope` may be stored for a song of `durationS` seconds (nil: unknown): at
    /// most ``maximumValues`` values, a hop within ``hops``, and no longer than the song and a
    /// second.
    public static func fits(_ envelope: EnergyEnvelope, durationS: Double?) -> Bool {
        guard envelope.values.count <= maximumValues, hops.contains(envelope.hopS) else { return false }
        guard let durationS, durationS.isFinite else { return true }
        return Double(envelope.values.count) * envelope.hopS <= durationS + 1
    }
}

/// Little-endian float32 arrays, whatever the machine's byte order.
enum FloatBlob {
    static func encode(_ values: [Float]) -> Data {
        values.map { $0.bitPattern.littleEndian }.withUnsafeBytes { Data($0) }
    }

    static func decode(_ data: Data) -> [Float] {
        let count = data.count / 4
        var values = [Float](repeating: 0, count: count)
        data.withUnsafeBytes { raw in
            for i in 0..<count {
                values[i] = Float(bitPattern: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: i * 4, as: UInt32.self)))
            }
        }
        return values
    }
}
