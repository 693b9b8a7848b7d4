import Foundation

/// A song's tempo changed to a target at the octave that needs the least change: a song at
/// 85 BPM serves 170 at double time (factor 2), one at 180 serves 88 at half time.
public struct TempoChange: Sendable, Hashable {
    /// The song's tempo.
    public var sourceBPM: Double
    /// 0.5, 1 or 2: the song's tempo is taken at this multiple.
    public var factor: Double
    public var targetBPM: Double

    /// The change from `sourceBPM` to `targetBPM`, at the octave nearest the target.
    public init(from sourceBPM: Double, to targetBPM: Double) {
        self.sourceBPM = sourceBPM
        self.targetBPM = targetBPM
        factor = [0.5, 1, 2].min { abs(log(targetBPM / (sourceBPM * $0))) < abs(log(targetBPM / (sourceBPM * $1))) } ?? 1
    }

    /// How much faster the output plays than the song: target / (source × factor).
    public var tempoRatio: Double { targetBPM / (sourceBPM * factor) }

    /// Whether the change of tempo is at most `maxStretch` (a fraction: 0.08 is 8 %).
    public func isWithin(_ maxStretch: Double) -> Bool { abs(tempoRatio - 1) <= maxStretch }
}
