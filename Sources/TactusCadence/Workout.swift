import TactusModel

/// A workout recorded by a watch (GPX, TCX or FIT): its samples in time order, each with what
/// the file records at that moment.
public struct Workout: Sendable, Hashable {
    /// One moment of the workout.
    public struct Sample: Sendable, Hashable {
        /// Seconds (since 1970 for GPX and TCX, since 1989 for FIT; only differences matter).
        public var time: Double
        /// The cadence as the file holds it (per foot for Garmin's running files), per minute.
        public var cadence: Double?
        /// Beats per minute.
        public var heartRate: Double?
        /// Metres since the start (recorded, or summed from the positions).
        public var distance: Double?
        /// Metres per second.
        public var speed: Double?

        public init(time: Double, cadence: Double? = nil, heartRate: Double? = nil, distance: Double? = nil, speed: Double? = nil) {
            self.time = time
            self.cadence = cadence
            self.heartRate = heartRate
            self.distance = distance
            self.speed = speed
        }
    }

    public var format: RecordingFormat
    public var samples: [Sample]
    /// What the file calls its cadence, for the error of a file without any (`gpxtpx:cad`).
    public var cadenceName: String

    public init(format: RecordingFormat, samples: [Sample], cadenceName: String) {
        self.format = format
        self.samples = samples
        self.cadenceName = cadenceName
    }
}

/// Reads watches' workout files, recognised by their content: FIT by its header, GPX and TCX by
/// their root element.
public enum WorkoutReader {
    /// The format of `bytes` when they are a workout file, nil otherwise (an accelerometer CSV).
    public static func format(of bytes: [UInt8]) -> RecordingFormat? {
        if FITDecoder.isFIT(bytes) { return .fit }
        let start = String(decoding: bytes.prefix(4096), as: UTF8.self)
        guard start.drop(while: { $0.isWhitespace || $0 == "\u{FEFF}" }).hasPrefix("<") else { return nil }
        if start.contains("<gpx") { return .gpx }
        if start.contains("<TrainingCenterDatabase") { return .tcx }
        return nil
    }

    /// The workout in `bytes`, of `format` (from ``format(of:)``), read from `file` (named in errors).
    public static func read(_ bytes: [UInt8], format: RecordingFormat, file: String) throws(CadenceError) -> Workout {
        switch format {
        case .fit: return try FITDecoder.workout(bytes, file: file)
        case .gpx, .tcx: return try XMLWorkoutReader.read(bytes, format: format, file: file)
        case .plain, .sensorLogger, .phyphox, .physicsToolbox:
            throw CadenceError(file: file, .notARecording("not a workout file"))
        }
    }
}
