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

    /// The most samples a workout may have: a day at ten a second (watches record one a second
    /// at most). Each takes some 70 bytes in memory.
    public static let maximumSamples = 864_000

    public var format: RecordingFormat
    public var samples: [Sample]
    /// What the file calls its cadence, for the error of a file without any (`gpxtpx:cad`).
    public var cadenceName: String
    /// The activity's sport as the file names it (``WorkoutSport/normalised(_:)``), nil when it names none.
    public var sport: String?

    public init(format: RecordingFormat, samples: [Sample], cadenceName: String, sport: String? = nil) {
        self.format = format
        self.samples = samples
        self.cadenceName = cadenceName
        self.sport = sport
    }

    /// The values each sample may hold: beyond them a file records no workout (a damaged file,
    /// or numbers meant to break its reader).
    enum Plausible {
        /// Per minute: running steps reach some 250, a track cyclist's pedalling 250.
        static let cadence = 0.0...400
        /// Beats per minute (0: the watch had no reading).
        static let heartRate = 0.0...300
        /// Metres per second: more than a record skydive.
        static let speed = 0.0...200
        /// Metres: a hundred times around the Earth.
        static let distance = 0.0...4e9
    }

    /// What the format calls a sample, for errors: a FIT record, a GPX or TCX track point.
    var sampleName: String { format == .fit ? "record" : "track point" }

    /// Throws, naming the sample, when a sample holds a value beyond ``Plausible``, or is
    /// timed before the sample before it.
    func checkValues(file: String) throws(CadenceError) {
        let checks: [(String, KeyPath<Sample, Double?>, ClosedRange<Double>, String)] = [
            ("cadence", \.cadence, Plausible.cadence, "per minute"), ("heart rate", \.heartRate, Plausible.heartRate, "bpm"),
            ("speed", \.speed, Plausible.speed, "m/s"), ("distance", \.distance, Plausible.distance, "m"),
        ]
        for (index, sample) in samples.enumerated() {
            for (name, field, range, unit) in checks {
                guard let value = sample[keyPath: field], !range.contains(value) else { continue }
                throw CadenceError(file: file, .malformedWorkout(format: format, reason:
                    "\(sampleName) \(index + 1): a \(name) of \(value) \(unit), outside \(Int(range.lowerBound))-\(Int(range.upperBound)) \(unit)"))
            }
            if index > 0, sample.time < samples[index - 1].time {
                throw CadenceError(file: file, .malformedWorkout(format: format, reason:
                    "\(sampleName) \(index + 1) is timed \(samples[index - 1].time - sample.time) s before the one before it"))
            }
        }
    }

    /// The error of a file with more than ``maximumSamples`` samples.
    static func tooManySamples(format: RecordingFormat, file: String) -> CadenceError {
        CadenceError(file: file, .malformedWorkout(format: format, reason:
            "more than \(maximumSamples) samples (a day at ten a second; watches record one a second)"))
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
