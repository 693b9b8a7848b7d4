import Foundation
import TactusDetector
import TactusModel

/// What the library keeps of a song: its identity, where it came from, its audio format, its
/// tags (as read from the file) and its energy envelope. Whoever
/// decodes a file fills one in.
public struct SongRecord: Sendable, Hashable, Codable {
    /// The SHA-256 of the file's bytes.
    public var id: SongID
    /// The file's name when it was added (the last path component, not a full path).
    public var fileName: String
    public var byteSize: Int
    /// The container format (`wav`, `flac`, `ogg`, `mp3`...).
    public var format: String
    /// The codec inside the container (`pcm_s16`, `vorbis`, `mp3`...), when known.
    public var codec: String?
    /// Samples per second of the decoded audio.
    public var sampleRate: Int
    public var channels: Int
    /// Duration in seconds.
    public var durationS: Double
    public var tags: AudioTags
    /// When the song entered the library. Recording a song again keeps the first date.
    public var addedAt: Date
    /// The energy envelope shared by every detector, stored as little-endian float32 (see
    /// ``PackedEnvelope``). Optional: a song can be recorded before its envelope is known.
    public var envelope: EnergyEnvelope?
    /// The constant beat grid fitted at the song's consensus tempo (``BeatGrid``). Optional:
    /// recording a song without one keeps the one it has.
    public var beatGrid: BeatGrid?

    public init(
        id: SongID, fileName: String, byteSize: Int, format: String, codec: String? = nil,
        sampleRate: Int, channels: Int, durationS: Double, tags: AudioTags = AudioTags(),
        addedAt: Date = Date(), envelope: EnergyEnvelope? = nil, beatGrid: BeatGrid? = nil
    ) {
        self.id = id
        self.fileName = fileName
        self.byteSize = byteSize
        self.format = format
        self.codec = codec
        self.sampleRate = sampleRate
        self.channels = channels
        self.durationS = durationS
        self.tags = tags
        self.addedAt = addedAt
        self.envelope = envelope
        self.beatGrid = beatGrid
    }

    /// Refuses a beat grid with a field out of range (``BeatGrid/problem``), wherever it comes from.
    static func check(_ grid: BeatGrid?) throws(StoreError) {
        if let problem = grid?.problem {
            throw .invalidValue(field: "beat_grid", value: problem, accepted: "a grid of 1 to 1000 BPM, its first beat within one beat")
        }
    }

    /// Checks every field; a song that fails is never written.
    func validate() throws(StoreError) {
        if fileName.isEmpty {
            throw .invalidValue(field: "file_name", value: "\"\"", accepted: "a non-empty file name")
        }
        if byteSize < 0 {
            throw .invalidValue(field: "byte_size", value: "\(byteSize)", accepted: "a size >= 0")
        }
        try Self.check(beatGrid)
        if sampleRate <= 0 {
            throw .invalidValue(field: "sample_rate", value: "\(sampleRate)", accepted: "a rate > 0")
        }
        if channels <= 0 {
            throw .invalidValue(field: "channels", value: "\(channels)", accepted: "a channel count > 0")
        }
        if !(durationS.isFinite && durationS >= 0) {
            throw .invalidValue(field: "duration_s", value: "\(durationS)", accepted: "a duration >= 0 seconds")
        }
        if let envelope, !(envelope.hopS.isFinite && envelope.hopS > 0) {
            throw .invalidValue(field: "envelope_hop_s", value: "\(envelope.hopS)", accepted: "a hop > 0 seconds")
        }
    }
}
