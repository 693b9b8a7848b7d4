/// A tempo and how strongly the detector supports it, relative to its best candidate (1.0).
public struct TempoCandidate: Sendable, Hashable, Codable {
    public var bpm: Double
    public var strength: Double

    public init(bpm: Double, strength: Double) {
        self.bpm = bpm
        self.strength = strength
    }
}

/// One analysis window of a song: where it lies, its energy, and the tempo found in it.
public struct AnalysisWindow: Sendable, Hashable, Codable {
    /// Start of the window, in seconds from the start of the song.
    public var startS: Double
    public var durationS: Double
    /// Mean of the squared samples of the window (linear, not dB).
    public var energy: Double
    /// The window's tempo estimate, or nil when the window has none.
    public var bpm: Double?
    /// How clearly the window shows its tempo, in [0, 1].
    public var strength: Double

    public init(startS: Double, durationS: Double, energy: Double, bpm: Double?, strength: Double) {
        self.startS = startS
        self.durationS = durationS
        self.energy = energy
        self.bpm = bpm
        self.strength = strength
    }

    enum CodingKeys: String, CodingKey {
        case startS = "start_s", durationS = "duration_s", energy, bpm, strength
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(startS, forKey: .startS)
        try container.encode(durationS, forKey: .durationS)
        try container.encode(energy, forKey: .energy)
        try container.encode(bpm, forKey: .bpm)  // null when absent, never omitted
        try container.encode(strength, forKey: .strength)
    }
}

/// Where the beats of a song fall, for a detector that tracks them (a beat grid for DJs, beat
/// times for researchers).
public struct BeatPositions: Sendable, Hashable, Codable {
    /// Beat times in seconds from the start of the song, ascending.
    public var times: [Double]
    /// The beats that begin a bar (a subset of `times`), when the detector tells them.
    public var downbeats: [Double]?

    public init(times: [Double], downbeats: [Double]? = nil) {
        self.times = times
        self.downbeats = downbeats
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(times, forKey: .times)
        try container.encodeIfPresent(downbeats, forKey: .downbeats)
    }
}

/// What a detector session finds in one song.
public struct DetectorOutput: Sendable, Hashable {
    /// The song's tempo, or nil when the audio has no detectable tempo (see `reason`).
    public var bpm: Double?
    /// Why `bpm` is nil (for example "silence", "no periodicity").
    public var reason: String?
    /// In [0, 1].
    public var confidence: Double
    /// The best tempi (at most five), strongest first, octave-related ones included.
    public var candidates: [TempoCandidate]
    /// The per-window record, in time order.
    public var windows: [AnalysisWindow]
    /// The beats, from detectors that track them; nil otherwise.
    public var beats: BeatPositions?

    public init(
        bpm: Double?, reason: String? = nil, confidence: Double, candidates: [TempoCandidate], windows: [AnalysisWindow],
        beats: BeatPositions? = nil
    ) {
        self.bpm = bpm
        self.reason = reason
        self.confidence = confidence
        self.candidates = candidates
        self.windows = windows
        self.beats = beats
    }
}

/// A detector's complete result for one song: the output plus which detector, version and
/// parameters produced it and how long it took.
public struct TempoAnalysis: Sendable, Hashable, Codable {
    public var detector: String
    public var version: String
    public var params: ParameterSet
    public var bpm: Double?
    public var reason: String?
    public var confidence: Double
    public var candidates: [TempoCandidate]
    public var windows: [AnalysisWindow]
    /// The beats, from detectors that track them (optional: absent on the wire otherwise).
    public var beats: BeatPositions?
    /// Wall-clock seconds the detector took (decoding excluded).
    public var seconds: Double

    public init(descriptor: DetectorDescriptor, params: ParameterSet, output: DetectorOutput, seconds: Double) {
        self.detector = descriptor.name
        self.version = descriptor.version
        self.params = params
        self.bpm = output.bpm
        self.reason = output.reason
        self.confidence = output.confidence
        self.candidates = output.candidates
        self.windows = output.windows
        self.beats = output.beats
        self.seconds = seconds
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(detector, forKey: .detector)
        try container.encode(version, forKey: .version)
        try container.encode(params, forKey: .params)
        try container.encode(bpm, forKey: .bpm)
        try container.encode(reason, forKey: .reason)
        try container.encode(confidence, forKey: .confidence)
        try container.encode(candidates, forKey: .candidates)
        try container.encode(windows, forKey: .windows)
        try container.encodeIfPresent(beats, forKey: .beats)
        try container.encode(seconds, forKey: .seconds)
    }
}

/// The song's energy envelope: mean squared amplitude per block of 23.2 ms (1024 samples at
/// 44.1 kHz, scaled to the song's sample rate). The same for every detector of a song.
public struct EnergyEnvelope: Sendable, Hashable, Codable {
    /// Seconds between consecutive values (the block length in seconds).
    public var hopS: Double
    public var values: [Float]

    public init(hopS: Double, values: [Float]) {
        self.hopS = hopS
        self.values = values
    }

    enum CodingKeys: String, CodingKey {
        case hopS = "hop_s", values
    }
}
