/// The logger app whose export a recording's header matched.
public enum RecordingFormat: String, Sendable, Hashable, Codable, CaseIterable {
    /// `t,x,y,z` (or `time,...`, or no header), time in seconds.
    case plain
    /// Sensor Logger (Kelvin Choi): `time,seconds_elapsed,z,y,x`, `time` in nanoseconds since the
    /// epoch; `Accelerometer.csv` is without gravity, `TotalAcceleration.csv` with it.
    case sensorLogger = "sensor-logger"
    /// phyphox (RWTH Aachen): `"Time (s)","Acceleration x (m/s^2)",...` or
    /// `"Linear Acceleration x (m/s^2)"`; comma, tab or semicolon separated (then with decimal commas).
    case phyphox
    /// Physics Toolbox Sensor Suite (Vieyra Software): `time,gFx,gFy,gFz,TgF` in g (the g-force
    /// meter) or `time,ax,ay,az,aT` in m/s^2 (the linear accelerometer); `time` in seconds or as a
    /// clock time (`2018-10-03 17:23:55.4640`, `17:23:55:464`).
    case physicsToolbox = "physics-toolbox"
}

/// The unit of a recording's three axes.
public enum AccelerationUnit: String, Sendable, Hashable, Codable {
    /// Metres per second squared.
    case metresPerSecondSquared = "m/s^2"
    /// Multiples of standard gravity (9.80665 m/s^2).
    case standardGravity = "g"

    /// One unit in g.
    public var inStandardGravity: Double {
        switch self {
        case .metresPerSecondSquared: 1 / 9.80665
        case .standardGravity: 1
        }
    }
}

/// How the unit of a recording was decided.
public enum UnitEvidence: String, Sendable, Hashable, Codable {
    /// The header names the unit (or the logger's format has one unit).
    case header
    /// From the data: the median magnitude is gravity, about 9.8 (m/s^2) or about 1 (g).
    case gravity
    /// Neither: the recording has no gravity and its header no unit; m/s^2 is assumed.
    case assumed
}

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
