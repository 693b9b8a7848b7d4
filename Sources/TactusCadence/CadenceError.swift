import TactusModel

/// Why a recording could not be read or analysed: the file (or the name a client gave it) and
/// the problem, printed as `FILE: problem`.
public struct CadenceError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong with the recording.
    public enum Problem: Sendable, Hashable {
        /// Not a CSV accelerometer recording: binary data, no time column or no three axes.
        case notARecording(String)
        /// Fewer samples, or a shorter span, than one analysis window needs.
        case tooFewSamples(count: Int, seconds: Double, minimumSeconds: Double)
        /// A value that is not a finite number (NaN, infinity, text) on a data line.
        case notANumber(line: Int, column: String, text: String)
        /// A data line with fewer fields than the header.
        case missingFields(line: Int, expected: Int, found: Int)
        /// A timestamp earlier than the one before it.
        case nonMonotonicTime(line: Int, time: Double, previous: Double)
        /// The same timestamp on two consecutive data lines.
        case duplicateTime(line: Int, time: Double)
        /// A sampling rate outside what phones record (the median interval between samples).
        case absurdRate(hertz: Double, accepted: ClosedRange<Double>)
        /// A recording larger than the size limit.
        case tooLarge(bytes: Int, limit: Int)
        /// A header line longer than any logger writes.
        case headerTooLong(bytes: Int, limit: Int)
        /// Samples spread over more time than a recording is analysed over (or than its samples
        /// can fill at their rate): its resampled signal would not fit in memory.
        case spanTooLong(seconds: Double, limitSeconds: Double)
        /// A workout file (GPX, TCX, FIT) that cannot be read as its format: malformed XML, a
        /// broken FIT record, a track point without a time.
        case malformedWorkout(format: RecordingFormat, reason: String)
        /// A workout file whose samples carry no cadence (a GPX without `gpxtpx:cad`).
        case noCadence(format: RecordingFormat, expected: String)
        /// A FIT file that is not an activity (a course, settings, a workout plan...).
        case notAnActivity(fileType: String)
        /// Heart rate asked of a recording without any (an accelerometer CSV, a workout without `hr`).
        case noHeartRate(format: RecordingFormat)
    }

    /// The file's path, or the name a client gave the recording.
    public var file: String
    public var problem: Problem

    public init(file: String, _ problem: Problem) {
        self.file = file
        self.problem = problem
    }

    /// A short stable name of the problem, for `tactus cadence --json` (a server answers every
    /// one of them ``TactusModel/ErrorCode/badRecording``, naming the problem in the message).
    public var code: ErrorCode {
        switch problem {
        case .notARecording: .notARecording
        case .tooFewSamples: .tooFewSamples
        case .notANumber: .notANumber
        case .missingFields: .missingFields
        case .nonMonotonicTime: .nonMonotonicTime
        case .duplicateTime: .duplicateTime
        case .absurdRate: .absurdRate
        case .tooLarge: .tooLarge
        case .headerTooLong: .headerTooLong
        case .spanTooLong: .spanTooLong
        case .malformedWorkout: .malformedWorkout
        case .noCadence: .noCadence
        case .notAnActivity: .notAnActivity
        case .noHeartRate: .noHeartRate
        }
    }

    /// The problem alone, without the file.
    public var message: String {
        switch problem {
        case .notARecording(let reason):
            return "not an accelerometer recording: \(reason)"
        case .tooFewSamples(let count, let seconds, let minimum):
            return "too few samples: \(count) over \(format(seconds)) s; at least \(format(minimum)) s of samples are needed"
        case .notANumber(let line, let column, let text):
            return "line \(line): column '\(column)' is not a finite number: '\(text.prefix(40))'"
        case .missingFields(let line, let expected, let found):
            return "line \(line): \(found) fields, the header has \(expected)"
        case .nonMonotonicTime(let line, let time, let previous):
            return "line \(line): time goes backwards (\(time) s after \(previous) s)"
        case .duplicateTime(let line, let time):
            return "line \(line): duplicated timestamp \(time) s (the line before has the same time)"
        case .absurdRate(let hertz, let accepted):
            return "sampling rate \(format(hertz)) Hz (median interval) is outside \(format(accepted.lowerBound))-"
                + "\(format(accepted.upperBound)) Hz; is the time column in seconds?"
        case .tooLarge(let bytes, let limit):
            return "\(bytes) bytes, more than the limit of \(limit) bytes"
        case .headerTooLong(let bytes, let limit):
            return "not an accelerometer recording: its first line has \(bytes) bytes; a header has at most \(limit)"
        case .spanTooLong(let seconds, let limit):
            return "the samples span \(format(seconds)) s, more than the \(format(limit)) s a recording may cover at its rate "
                + "(are the times in seconds?)"
        case .malformedWorkout(let workoutFormat, let reason):
            return "not a readable \(workoutFormat.rawValue.uppercased()) workout: \(reason)"
        case .noCadence(let workoutFormat, let expected):
            return "no cadence: the \(workoutFormat.rawValue.uppercased()) file's samples have no \(expected)"
        case .notAnActivity(let fileType):
            return "a FIT file of type \(fileType), not an activity: only activity files (type 4) hold a workout's records"
        case .noHeartRate(let recordingFormat):
            return recordingFormat.isWorkout
                ? "no heart rate: the \(recordingFormat.rawValue.uppercased()) file's samples have none"
                : "no heart rate: an accelerometer recording has none (a watch's GPX, TCX or FIT workout may)"
        }
    }

    public var description: String { "\(file): \(message)" }

    private func format(_ value: Double) -> String {
        if value.isFinite, value == value.rounded(), abs(value) < 1e9 { return String(Int(value)) }
        let magnitude = abs(value)
        if magnitude >= 0.01 && magnitude < 1e6 { return String((value * 100).rounded() / 100) }
        return "\(value)"
    }
}

extension ErrorCode {
    // The problems of a recording, by ``CadenceError/code``.
    static let notARecording = ErrorCode(rawValue: "not-a-recording")
    static let tooFewSamples = ErrorCode(rawValue: "too-few-samples")
    static let notANumber = ErrorCode(rawValue: "not-a-number")
    static let missingFields = ErrorCode(rawValue: "missing-fields")
    static let nonMonotonicTime = ErrorCode(rawValue: "non-monotonic-time")
    static let duplicateTime = ErrorCode(rawValue: "duplicate-time")
    static let absurdRate = ErrorCode(rawValue: "absurd-rate")
    static let headerTooLong = ErrorCode(rawValue: "header-too-long")
    static let spanTooLong = ErrorCode(rawValue: "span-too-long")
    static let malformedWorkout = ErrorCode(rawValue: "malformed-workout")
    static let noCadence = ErrorCode(rawValue: "no-cadence")
    static let notAnActivity = ErrorCode(rawValue: "not-an-activity")
    static let noHeartRate = ErrorCode(rawValue: "no-heart-rate")
}
