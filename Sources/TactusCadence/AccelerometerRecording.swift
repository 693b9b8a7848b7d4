import TactusModel

/// An accelerometer recording as read from a file: sample times in seconds (strictly increasing,
/// possibly irregular) and the three axes in the recording's own unit.
public struct AccelerometerRecording: Sendable, Hashable {
    public var format: RecordingFormat
    /// Seconds, strictly increasing; the first sample need not be at 0.
    public var times: [Double]
    public var x: [Double]
    public var y: [Double]
    public var z: [Double]
    /// The unit the header declares, if it does.
    public var declaredUnit: AccelerationUnit?

    public init(format: RecordingFormat, times: [Double], x: [Double], y: [Double], z: [Double], declaredUnit: AccelerationUnit?) {
        precondition(times.count == x.count && x.count == y.count && y.count == z.count)
        self.format = format
        self.times = times
        self.x = x
        self.y = y
        self.z = z
        self.declaredUnit = declaredUnit
    }

    public var count: Int { times.count }

    /// From the first sample to the last, in seconds.
    public var duration: Double { times.count > 1 ? times[times.count - 1] - times[0] : 0 }
}
