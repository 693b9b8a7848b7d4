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
    /// The standard deviation of the analysed signal, in g.
    public var movement: Double

    public init(start: Double, end: Double, status: WindowStatus, cadence: Double?, confidence: Double, movement: Double) {
        self.start = start
        self.end = end
        self.status = status
        self.cadence = cadence
        self.confidence = confidence
        self.movement = movement
    }

    enum CodingKeys: String, CodingKey {
        case start = "start_s", end = "end_s", status, cadence = "cadence_spm", confidence, movement = "movement_g"
    }

    /// Writes every key, `cadence_spm` as null when the window has none.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(start, forKey: .start)
        try container.encode(end, forKey: .end)
        try container.encode(status, forKey: .status)
        try container.encode(cadence, forKey: .cadence)
        try container.encode(confidence, forKey: .confidence)
        try container.encode(movement, forKey: .movement)
    }
}

/// The cadence of one recording: over time (windows) and overall.
public struct CadenceReport: Sendable, Hashable, Codable {
    /// The file's path, or the name a client gave the recording.
    public var file: String
    public var format: RecordingFormat
    public var unit: AccelerationUnit
    public var unitEvidence: UnitEvidence
    /// Whether the recording includes gravity (then the magnitude of the three axes is analysed;
    /// without it, the three axes).
    public var includesGravity: Bool
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
        file: String, format: RecordingFormat, unit: AccelerationUnit, unitEvidence: UnitEvidence, includesGravity: Bool,
        samples: Int, duration: Double, sampleRate: Double, cadence: Double?, stepSeconds: Double, windows: [CadenceWindow]
    ) {
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
    }

    /// Writes every key, `cadence_spm` as null when no window has steps.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(file, forKey: .file)
        try container.encode(format, forKey: .format)
        try container.encode(unit, forKey: .unit)
        try container.encode(unitEvidence, forKey: .unitEvidence)
        try container.encode(includesGravity, forKey: .includesGravity)
        try container.encode(samples, forKey: .samples)
        try container.encode(duration, forKey: .duration)
        try container.encode(sampleRate, forKey: .sampleRate)
        try container.encode(cadence, forKey: .cadence)
        try container.encode(stepSeconds, forKey: .stepSeconds)
        try container.encode(windows, forKey: .windows)
    }

    /// The windows' counts by status.
    public func count(_ status: WindowStatus) -> Int { windows.count { $0.status == status } }
}
