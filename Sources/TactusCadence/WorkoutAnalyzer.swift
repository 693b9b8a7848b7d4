import TactusModel

/// The cadence, heart rate and pace of a watch's workout, in the windows of an accelerometer
/// recording's analysis (``CadenceAnalyzer/Settings``: 10 s every 2 s) with the same statuses.
///
/// Watches record running cadence per foot (Garmin's GPX `gpxtpx:cad`, TCX `RunCadence` and
/// FIT `cadence`: strides per minute, about 75-100 when running): a file whose median cadence
/// (of the samples above ``movingCadence``) is below ``strideCeiling`` holds strides, and its
/// cadence is doubled to steps per minute; ``CadenceReport/cadenceHeld`` says which it held.
///
/// A workout of a sport whose cadence counts no steps (``WorkoutSport/cadenceNotSteps(_:)``:
/// cycling's pedal revolutions, rowing's strokes...) is never read as steps: its cadence is
/// reported as held (``CadenceWindow/heldCadence``, ``CadenceReport/heldCadence``), each window
/// `still` or `irregular` (moving without steps), and ``CadenceReport/cadenceIsNotSteps`` says why.
///
/// A window is `still` when its samples have no cadence above ``movingCadence`` (a watch
/// records 0 when its wearer stops; an auto-paused watch records nothing), `steps` when its
/// mean cadence lies in the settings' cadence range, `irregular` otherwise. Its confidence is
/// the share of its samples within 10 % of its mean cadence (how steady the cadence is).
public struct WorkoutAnalyzer: Sendable {
    /// Below this many per minute a sample's cadence counts as none (standing).
    public static let movingCadence = 20.0
    /// A file's median cadence below this is per foot (strides per minute).
    public static let strideCeiling = 130.0
    /// Below this speed (m/s) a window's pace is not given: standing.
    public static let movingSpeed = 0.3

    public var settings: CadenceAnalyzer.Settings

    public init(settings: CadenceAnalyzer.Settings = CadenceAnalyzer.Settings()) {
        self.settings = settings
    }

    /// The report of `workout`, read from `file`.
    public func analyze(_ workout: Workout, file: String) throws(CadenceError) -> CadenceReport {
        let samples = workout.samples
        try workout.checkValues(file: file)
        let moving = samples.compactMap(\.cadence).filter { $0 >= Self.movingCadence }.sorted()
        guard !moving.isEmpty || samples.contains(where: { $0.cadence != nil }) else {
            throw CadenceError(file: file, .noCadence(format: workout.format, expected: workout.cadenceName))
        }
        let first = samples.first?.time ?? 0
        let duration = (samples.last?.time ?? 0) - first
        guard samples.count >= 2, duration >= settings.window else {
            throw CadenceError(file: file, .tooFewSamples(count: samples.count, seconds: duration, minimumSeconds: settings.window))
        }
        guard duration <= RecordingReader.maximumSeconds else {
            throw CadenceError(file: file, .spanTooLong(seconds: duration, limitSeconds: RecordingReader.maximumSeconds))
        }
        let held = WorkoutSport.cadenceNotSteps(workout.sport)
            ?? ((moving.isEmpty ? 0 : moving[moving.count / 2]) < Self.strideCeiling ? .strides : .steps)

        let hop = settings.hop(over: duration)
        var windows: [CadenceWindow] = []
        var lower = 0
        var start = 0.0
        while start + settings.window <= duration + 1e-9 {
            let from = first + start, to = from + settings.window
            while lower < samples.count, samples[lower].time < from { lower += 1 }
            var upper = lower
            while upper < samples.count, samples[upper].time < to { upper += 1 }
            windows.append(window(samples[lower..<upper], start: start, held: held))
            start += hop
        }
        let stepping = windows.compactMap(\.cadence)
        let heartRates = samples.compactMap(\.heartRate).filter { $0 > 0 }
        let distances = samples.compactMap(\.distance)
        let distance = (distances.last ?? 0) - (distances.first ?? 0)
        var intervals = zip(samples.dropFirst(), samples).map { $0.time - $1.time }.filter { $0 > 0 }
        intervals.sort()
        let heldCadences = windows.compactMap(\.heldCadence)
        return CadenceReport(
            file: file, format: workout.format, unit: nil, unitEvidence: nil, includesGravity: nil,
            samples: samples.count, duration: duration, sampleRate: intervals.isEmpty ? 1 : 1 / intervals[intervals.count / 2],
            cadence: stepping.isEmpty ? nil : stepping.reduce(0, +) / Double(stepping.count),
            stepSeconds: Double(stepping.count) * hop, windows: windows, cadenceHeld: held,
            heartRate: heartRates.isEmpty ? nil : heartRates.reduce(0, +) / Double(heartRates.count),
            pace: distance > 0 ? duration / distance * 1000 : nil, sport: workout.sport,
            heldCadence: heldCadences.isEmpty ? nil : heldCadences.reduce(0, +) / Double(heldCadences.count))
    }

    /// One window over `samples` (those whose time lies in it), from `start` seconds, of a
    /// workout whose cadence counts `held`.
    private func window(_ samples: ArraySlice<Workout.Sample>, start: Double, held: CadenceHeld) -> CadenceWindow {
        let factor = held == .strides ? 2.0 : 1.0
        let cadences = samples.compactMap(\.cadence).map { $0 * factor }
        // Steps below the moving cadence are standing; a rower's 18 strokes a minute are not.
        let moving = cadences.filter { held.isSteps ? $0 >= Self.movingCadence * factor : $0 > 0 }
        let heartRates = samples.compactMap(\.heartRate).filter { $0 > 0 }
        var window = CadenceWindow(
            start: start, end: start + settings.window, status: .still, cadence: nil, confidence: 0, movement: nil,
            heartRate: heartRates.isEmpty ? nil : heartRates.reduce(0, +) / Double(heartRates.count), pace: pace(samples))
        guard !moving.isEmpty else { return window }
        let mean = moving.reduce(0, +) / Double(moving.count)
        window.confidence = Double(cadences.count { abs($0 - mean) <= 0.1 * mean }) / Double(cadences.count)
        if !held.isSteps {
            window.status = .irregular
            window.heldCadence = mean
        } else if settings.cadenceRange.contains(mean) {
            window.status = .steps
            window.cadence = mean
        } else {
            window.status = .irregular
        }
        return window
    }

    /// Seconds per kilometre over `samples`: from their speeds, else from the distance they cover.
    private func pace(_ samples: ArraySlice<Workout.Sample>) -> Double? {
        let speeds = samples.compactMap(\.speed)
        var speed: Double?
        if !speeds.isEmpty {
            speed = speeds.reduce(0, +) / Double(speeds.count)
        } else if let first = samples.first(where: { $0.distance != nil }), let last = samples.last(where: { $0.distance != nil }),
            last.time > first.time, let from = first.distance, let to = last.distance
        {
            speed = (to - from) / (last.time - first.time)
        }
        guard let speed, speed >= Self.movingSpeed else { return nil }
        return 1000 / speed
    }
}
