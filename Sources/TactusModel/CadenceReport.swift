/// What one analysis window of a recording shows.
public enum WindowStatus: String, Sendable, Hashable, Codable {
    /// A step period was found: the window has a cadence.
    case steps
    /// Too little movement: the person stands still (or the phone lies down).
    case still
    /// Movement without a step period in 90-210 steps/min (or too weak a one).
    case irregular
}

/// One analysis window: its span, status, cadence and confidence.
public struct CadenceWindow: Sendable, Hashable, Codable {
    /// Seconds from the recording's first sample.
    public var start: Double
    public var end: Double
    public var status: WindowStatus
    /// Steps per minute; nil unless ``status`` is ``WindowStatus/steps``.
    public var cadence: Double?
    /// The normalised autocorrelation at the step (or stride) period, 0-1: how periodic the
    /// steps are. 0 for a window standing still.
    public var confidence: Double
    /// The standard deviation of the analysed signal, in g (accelerometer recordings only).
    public var movement: Double?
    /// The mean heart rate over the window, in beats per minute (workouts that record it only).
    public var heartRate: Double?
    /// The pace over the window, in seconds per kilometre (workouts that record distance or speed only).
    public var pace: Double?
    /// A workout of a sport whose cadence is no steps (cycling, rowing...): the window's mean
    /// cadence as the file holds it, per minute (``CadenceReport/cadenceHeld`` names the unit).
    public var heldCadence: Double?

    public init(
        start: Double, end: Double, status: WindowStatus, cadence: Double?, confidence: Double, movement: Double?,
        heartRate: Double? = nil, pace: Double? = nil, heldCadence: Double? = nil
    ) {
        self.heldCadence = heldCadence
        self.start = start
        self.end = end
        self.status = status
        self.cadence = cadence
        self.confidence = confidence
        self.movement = movement
        self.heartRate = heartRate
        self.pace = pace
    }

    enum CodingKeys: String, CodingKey {
        case start = "start_s", end = "end_s", status, cadence = "cadence_spm", confidence, movement = "movement_g"
        case heartRate = "heart_rate_bpm", pace = "pace_s_per_km", heldCadence = "held_cadence"
    }

    /// Writes every key, `cadence_spm` as null when the window has none; `movement_g`,
    /// `heart_rate_bpm`, `pace_s_per_km` and `held_cadence` only when the recording has them.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(start, forKey: .start)
        try container.encode(end, forKey: .end)
        try container.encode(status, forKey: .status)
        try container.encode(cadence, forKey: .cadence)
        try container.encode(confidence, forKey: .confidence)
        try container.encodeIfPresent(movement, forKey: .movement)
        try container.encodeIfPresent(heartRate, forKey: .heartRate)
        try container.encodeIfPresent(pace, forKey: .pace)
        try container.encodeIfPresent(heldCadence, forKey: .heldCadence)
    }
}

/// What a workout file's cadence counts: watches record running cadence per foot, and the
/// cadence of other sports in their own units (a bike's pedal revolutions).
public enum CadenceHeld: String, Sendable, Hashable, Codable {
    /// Steps (both feet) per minute: reported as held.
    case steps = "steps-per-minute"
    /// Strides (one foot) per minute, as Garmin's GPX, TCX and FIT files hold running cadence:
    /// reported doubled, as steps per minute.
    case strides = "strides-per-minute"
    /// Pedal revolutions per minute (cycling): no steps, reported as held.
    case revolutions = "revolutions-per-minute"
    /// Strokes per minute (rowing, paddling, swimming): no steps, reported as held.
    case strokes = "strokes-per-minute"
    /// The cadence of another sport that is not on foot (skating, skiing, a multisport
    /// activity...): no steps, reported as held.
    case other = "other-per-minute"

    /// Whether the cadence counts steps (or strides, doubled to steps).
    public var isSteps: Bool { self == .steps || self == .strides }

    /// What the cadence counts, for a person: "pedal revolutions".
    public var counted: String {
        switch self {
        case .steps: "steps"
        case .strides: "strides (one foot)"
        case .revolutions: "pedal revolutions"
        case .strokes: "strokes"
        case .other: "the movements of its sport"
        }
    }
}

/// The cadence of one recording: over time (windows) and overall.
public struct CadenceReport: Sendable, Hashable, Codable {
    /// The file's path, or the name a client gave the recording.
    public var file: String
    public var format: RecordingFormat
    /// The unit of an accelerometer recording's axes (nil for a workout file).
    public var unit: AccelerationUnit?
    public var unitEvidence: UnitEvidence?
    /// Whether an accelerometer recording includes gravity (then the magnitude of the three
    /// axes is analysed; without it, the three axes); nil for a workout file.
    public var includesGravity: Bool?
    /// A workout file's: the activity's sport as the file names it (FIT's session or sport
    /// message, TCX's `Sport`, GPX's track `type`), `running`, `cycling`...; nil when it names none.
    public var sport: String?
    /// A workout file's: what its cadence counted. The report is in steps per minute when it
    /// counts steps or strides; the cadence of another sport is no steps and is only in
    /// ``heldCadence``.
    public var cadenceHeld: CadenceHeld?
    /// A workout of a sport whose cadence is no steps: the mean of the windows' held cadence
    /// while moving, per minute in the unit ``cadenceHeld`` names; nil otherwise.
    public var heldCadence: Double?
    /// A workout file's: the mean heart rate, in beats per minute, when it records one.
    public var heartRate: Double?
    /// A workout file's: the mean pace while moving, in seconds per kilometre, when it records distance or speed.
    public var pace: Double?
    public var samples: Int
    /// Seconds from the first sample to the last.
    public var duration: Double
    /// The median sampling rate of the recording, in Hz.
    public var sampleRate: Double
    /// The mean cadence of the windows with steps, in steps per minute; nil when none has.
    public var cadence: Double?
    /// Seconds covered by windows with steps (each window counting for its hop).
    public var stepSeconds: Double
    public var windows: [CadenceWindow]

    public init(
        file: String, format: RecordingFormat, unit: AccelerationUnit?, unitEvidence: UnitEvidence?, includesGravity: Bool?,
        samples: Int, duration: Double, sampleRate: Double, cadence: Double?, stepSeconds: Double, windows: [CadenceWindow],
        cadenceHeld: CadenceHeld? = nil, heartRate: Double? = nil, pace: Double? = nil, sport: String? = nil,
        heldCadence: Double? = nil
    ) {
        self.sport = sport
        self.heldCadence = heldCadence
        self.cadenceHeld = cadenceHeld
        self.heartRate = heartRate
        self.pace = pace
        self.file = file
        self.format = format
        self.unit = unit
        self.unitEvidence = unitEvidence
        self.includesGravity = includesGravity
        self.samples = samples
        self.duration = duration
        self.sampleRate = sampleRate
        self.cadence = cadence
        self.stepSeconds = stepSeconds
        self.windows = windows
    }

    enum CodingKeys: String, CodingKey {
        case file, format, unit, unitEvidence = "unit_evidence", includesGravity = "includes_gravity", samples
        case duration = "duration_s", sampleRate = "sample_rate_hz", cadence = "cadence_spm", stepSeconds = "step_s", windows
        case cadenceHeld = "cadence_held", heartRate = "heart_rate_bpm", pace = "pace_s_per_km", sport
        case heldCadence = "held_cadence"
    }

    /// Writes every key, `cadence_spm` as null when no window has steps; an accelerometer
    /// recording's `unit`, `unit_evidence` and `includes_gravity`, a workout's `sport`,
    /// `cadence_held`, `held_cadence`, `heart_rate_bpm` and `pace_s_per_km`, only when present.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(file, forKey: .file)
        try container.encode(format, forKey: .format)
        try container.encodeIfPresent(unit, forKey: .unit)
        try container.encodeIfPresent(unitEvidence, forKey: .unitEvidence)
        try container.encodeIfPresent(includesGravity, forKey: .includesGravity)
        try container.encodeIfPresent(sport, forKey: .sport)
        try container.encodeIfPresent(cadenceHeld, forKey: .cadenceHeld)
        try container.encodeIfPresent(heldCadence, forKey: .heldCadence)
        try container.encodeIfPresent(heartRate, forKey: .heartRate)
        try container.encodeIfPresent(pace, forKey: .pace)
        try container.encode(samples, forKey: .samples)
        try container.encode(duration, forKey: .duration)
        try container.encode(sampleRate, forKey: .sampleRate)
        try container.encode(cadence, forKey: .cadence)
        try container.encode(stepSeconds, forKey: .stepSeconds)
        try container.encode(windows, forKey: .windows)
    }

    /// Why the report's cadence cannot set a runner's tempo: a workout whose cadence counts
    /// no steps ("a cycling workout: its cadence counts pedal revolutions, not steps"); nil
    /// when it counts steps.
    public var cadenceIsNotSteps: String? {
        guard let cadenceHeld, !cadenceHeld.isSteps else { return nil }
        return "a \(sport ?? "non-running") workout: its cadence counts \(cadenceHeld.counted) (\(cadenceHeld.rawValue)), not steps"
    }

    /// The windows' counts by status.
    public func count(_ status: WindowStatus) -> Int { windows.count { $0.status == status } }
}
