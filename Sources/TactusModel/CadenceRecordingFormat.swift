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
    /// A watch's workout as GPX 1.1 with Garmin's TrackPointExtension (`gpxtpx:cad`, `gpxtpx:hr`).
    case gpx
    /// A watch's workout as Training Center XML (`Cadence`, the `RunCadence` extension, `HeartRateBpm`).
    case tcx
    /// A watch's activity as a FIT file (record messages: cadence, fractional cadence, heart rate, speed).
    case fit

    /// Whether the format is a watch's workout file rather than an accelerometer recording.
    public var isWorkout: Bool {
        switch self {
        case .gpx, .tcx, .fit: true
        case .plain, .sensorLogger, .phyphox, .physicsToolbox: false
        }
    }
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
