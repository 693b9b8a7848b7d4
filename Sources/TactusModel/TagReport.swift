import Foundation

/// One tag field as written, for reports: `TBPM` = `128`, `TXXX:BPM` = `127.9`, `BPM` = `127.9`...
public struct TagField: Sendable, Hashable, Codable {
    public var name: String
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    enum CodingKeys: String, CodingKey {
        case name, value
    }

    /// The tempo a BPM tag's text gives: a number in 1...1000, else nil.
    public static func tempo(of text: String) -> Double? {
        guard let value = Double(text.trimmingCharacters(in: .whitespaces)), (1...1000).contains(value) else { return nil }
        return value
    }
}

/// What `tags read` or `tags write` did with one song's file: a line of their table, of their
/// JSON Lines, and of the `tags` reply.
public struct TagReport: Sendable, Hashable, Codable {
    /// What happened to the file.
    public enum Outcome: String, Sendable, Hashable, Codable {
        /// `tags read`: the tag became the song's reference tempo.
        case imported
        /// `tags write`: the tempo was written.
        case written
        /// `tags write --dry-run`: the tempo would be written (the file was checked).
        case wouldWrite = "would-write"
        case skipped
        case failed
    }

    /// The file, as named or as the library stores it; nil for a song without a known file.
    public var file: String?
    public var song: SongID?
    public var outcome: Outcome
    /// The tag as read (`tags read`).
    public var tag: String?
    public var bpm: Double?
    public var confidence: Double?
    /// `consensus`, or the detector whose tempo is written (`tags write`).
    public var from: String?
    public var fields: [TagField]?
    /// Where the original was kept (`--backup`).
    public var backup: String?
    /// The song's new SHA-256 after a write.
    public var newSong: SongID?
    /// Why the file was skipped or failed (or a note on a write).
    public var reason: String?
    /// The error's code, for failures.
    public var code: ErrorCode?

    /// A report of `outcome` for `file`, the rest to be filled in.
    public init(file: String?, song: SongID?, outcome: Outcome) {
        self.file = file
        self.song = song
        self.outcome = outcome
    }

    /// The same report, skipped or failed for `reason`.
    public func because(_ reason: String) -> TagReport {
        var report = self
        report.reason = reason
        return report
    }

    enum CodingKeys: String, CodingKey {
        case file, song, outcome, tag, bpm, confidence, from, fields, backup, newSong = "new_song", reason, code
    }
}
