import Crypto
import Foundation
import TactusDetector
import TactusModel

/// One detector's analysis of one song as the library stores it: the detector's result plus
/// how it ended, which worker produced it and when.
///
/// The library keeps one analysis per song, detector, detector version and parameter set:
/// storing another with the same four replaces it.
public struct AnalysisRecord: Sendable, Hashable {
    /// Detector, version, parameters, tempo, candidates, windows and time taken. For a failed
    /// analysis only the detector, version, parameters and seconds are meaningful.
    public var analysis: TempoAnalysis
    public var status: AnalysisStatus
    /// Set exactly when `status` is `failed`.
    public var failure: AnalysisFailure?
    /// The worker that produced it (for example `host:pid`), when known.
    public var worker: String?
    public var analyzedAt: Date

    /// A completed analysis: `done` when the detector found a tempo, `no-tempo` otherwise.
    public init(_ analysis: TempoAnalysis, worker: String? = nil, analyzedAt: Date = Date()) {
        self.analysis = analysis
        self.status = analysis.bpm == nil ? .noTempo : .done
        self.failure = nil
        self.worker = worker
        self.analyzedAt = analyzedAt
    }

    /// A failed analysis of `detector` (with the given version and parameters).
    public static func failed(
        detector: String, version: String, params: ParameterSet, failure: AnalysisFailure,
        seconds: Double = 0, worker: String? = nil, analyzedAt: Date = Date()
    ) -> AnalysisRecord {
        let analysis = TempoAnalysis(
            descriptor: DetectorDescriptor(name: detector, version: version, summary: "", presets: [], specific: []),
            params: params,
            output: DetectorOutput(bpm: nil, confidence: 0, candidates: [], windows: []),
            seconds: seconds)
        return AnalysisRecord(
            analysis: analysis, status: .failed, failure: failure, worker: worker, analyzedAt: analyzedAt)
    }

    init(analysis: TempoAnalysis, status: AnalysisStatus, failure: AnalysisFailure?, worker: String?, analyzedAt: Date) {
        self.analysis = analysis
        self.status = status
        self.failure = failure
        self.worker = worker
        self.analyzedAt = analyzedAt
    }

    /// The preset the parameters name (`default` when they name none).
    public var preset: String {
        if case .text(let preset)? = analysis.params["preset"] { return preset }
        return "default"
    }

    /// The detector's name, followed by `/preset` unless the preset is `default`: what tables
    /// and comparisons call this result (`comb-filter`, `comb-filter/classic`).
    public var label: String {
        preset == "default" ? analysis.detector : "\(analysis.detector)/\(preset)"
    }

    /// The SHA-256 (hex) of the parameters' canonical JSON: part of the analysis' identity.
    public var paramsHash: String {
        Self.hash(canonicalJSON: analysis.params.canonicalJSON)
    }

    static func hash(canonicalJSON: String) -> String {
        Hex.string(SHA256.hash(data: Data(canonicalJSON.utf8)))
    }

    /// Checks every field; an analysis that fails is never written.
    func validate() throws(StoreError) {
        let a = analysis
        if a.detector.isEmpty {
            throw .invalidValue(field: "detector", value: "\"\"", accepted: "a detector name")
        }
        if a.version.isEmpty {
            throw .invalidValue(field: "\(a.detector).detector_version", value: "\"\"", accepted: "a version")
        }
        if !(a.seconds.isFinite && a.seconds >= 0) {
            throw .invalidValue(field: "\(a.detector).seconds", value: "\(a.seconds)", accepted: "a duration >= 0 seconds")
        }
        switch status {
        case .done:
            guard let bpm = a.bpm else {
                throw .invalidValue(field: "\(a.detector).bpm", value: "null", accepted: "a tempo when the status is done")
            }
            try Library.checkBPM(bpm, field: "\(a.detector).bpm")
        case .noTempo, .failed:
            if let bpm = a.bpm {
                throw .invalidValue(
                    field: "\(a.detector).bpm", value: "\(bpm)", accepted: "no tempo when the status is \(status.rawValue)")
            }
        }
        if (status == .failed) != (failure != nil) {
            throw .invalidValue(
                field: "\(a.detector).error", value: failure?.code.rawValue ?? "null",
                accepted: "an error code and message exactly when the status is failed")
        }
        if !(a.confidence.isFinite && (0...1).contains(a.confidence)) {
            throw .invalidValue(field: "\(a.detector).confidence", value: "\(a.confidence)", accepted: "a number in 0...1")
        }
        for (index, candidate) in a.candidates.enumerated() {
            if !(candidate.bpm.isFinite && TempoQuery.acceptedBPM.contains(candidate.bpm)) {
                throw .bpmOutOfRange(field: "\(a.detector).candidates[\(index)].bpm", value: candidate.bpm)
            }
            if !candidate.strength.isFinite {
                throw .invalidValue(
                    field: "\(a.detector).candidates[\(index)].strength", value: "\(candidate.strength)",
                    accepted: "a finite number")
            }
        }
        if a.windows.count > PackedWindows.maximumWindows {
            throw .invalidValue(
                field: "\(a.detector).windows", value: "\(a.windows.count) windows",
                accepted: "at most \(PackedWindows.maximumWindows) windows")
        }
        for (index, window) in a.windows.enumerated() {
            func field(_ name: String) -> String { "\(a.detector).windows[\(index)].\(name)" }
            if !(window.startS.isFinite && window.startS >= 0) {
                throw .invalidValue(field: field("start_s"), value: "\(window.startS)", accepted: "a time >= 0 seconds")
            }
            if !(window.durationS.isFinite && window.durationS >= 0) {
                throw .invalidValue(field: field("duration_s"), value: "\(window.durationS)", accepted: "a duration >= 0 seconds")
            }
            if !(window.energy.isFinite && window.energy >= 0) {
                throw .invalidValue(field: field("energy"), value: "\(window.energy)", accepted: "an energy >= 0")
            }
            if let bpm = window.bpm, !(bpm.isFinite && TempoQuery.acceptedBPM.contains(bpm)) {
                throw .bpmOutOfRange(field: field("bpm"), value: bpm)
            }
            if !window.strength.isFinite {
                throw .invalidValue(field: field("strength"), value: "\(window.strength)", accepted: "a finite number")
            }
        }
        if let beats = a.beats {
            try Self.checkBeatTimes(beats.times, field: "\(a.detector).beats.times")
            if let downbeats = beats.downbeats {
                try Self.checkBeatTimes(downbeats, field: "\(a.detector).beats.downbeats")
            }
        }
    }

    /// Checks the analysis against the song it is of, `durationS` seconds long (a worker's
    /// result; a song analysed here is checked by construction): its windows in time order,
    /// each starting within the song, at most ten a second of it (the built-in detectors step
    /// at least 0.5 s), and its beats within the song. One second of slack at the end.
    func checkWithin(durationS: Double) throws(StoreError) {
        let a = analysis, end = durationS + 1
        let most = Int(min(10 * durationS, 1e9)) + 10
        if a.windows.count > most {
            throw .invalidValue(
                field: "\(a.detector).windows", value: "\(a.windows.count) windows",
                accepted: "at most \(most) windows for a song of \(durationS) s (ten a second)")
        }
        var previous = 0.0
        for (index, window) in a.windows.enumerated() {
            guard window.startS >= previous && window.startS <= end else {
                throw .invalidValue(
                    field: "\(a.detector).windows[\(index)].start_s", value: "\(window.startS)",
                    accepted: "a start within the song's \(durationS) s, not before the window before it")
            }
            previous = window.startS
        }
        if let last = a.beats?.times.last, last > end {
            throw .invalidValue(
                field: "\(a.detector).beats.times", value: "\(last)", accepted: "beats within the song's \(durationS) s")
        }
    }

    /// At most ``maximumBeats`` times, each finite, >= 0 and not before the one before it.
    private static func checkBeatTimes(_ times: [Double], field: String) throws(StoreError) {
        if times.count > maximumBeats {
            throw .invalidValue(field: field, value: "\(times.count) times", accepted: "at most \(maximumBeats) times")
        }
        var previous = 0.0
        for (index, time) in times.enumerated() {
            if !(time.isFinite && time >= previous) {
                throw .invalidValue(
                    field: "\(field)[\(index)]", value: "\(time)", accepted: "a time >= 0 seconds, not before the one before it")
            }
            previous = time
        }
    }

    /// Beats a stored analysis may carry: 24 hours at 300 BPM.
    static let maximumBeats = 432_000
}

/// An analysis read back from the library, with the song it belongs to.
public struct StoredAnalysis: Sendable, Hashable {
    public var song: SongID
    public var record: AnalysisRecord
    /// The SHA-256 of the parameters' canonical JSON, as stored.
    public var paramsHash: String
}
