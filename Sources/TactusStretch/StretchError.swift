/// Why a song could not be stretched to a tempo.
public enum StretchError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The song could not be decoded or analysed (the audio error's message, which names the file).
    case unreadable(file: String, message: String)
    /// No detector found the song's tempo, and none was given.
    case noTempo(file: String)
    /// Even at half or double its tempo, the song is further from the target than allowed.
    case tooFar(file: String, bpm: Double, target: Double, maxStretch: Double)
    case cannotWrite(path: String, reason: String)

    public var description: String {
        switch self {
        case .unreadable(let file, let message):
            return message.hasPrefix(file) ? message : "\(file): \(message)"
        case .noTempo(let file):
            return "\(file): no tempo found; give it with --from-bpm"
        case .tooFar(let file, let bpm, let target, let maxStretch):
            return "\(file): at \(Self.format(bpm)) BPM (or half or double) it is more than \(Self.format(maxStretch * 100)) % "
                + "from \(Self.format(target)) BPM (--max-stretch)"
        case .cannotWrite(let path, let reason):
            return "cannot write '\(path)': \(reason)"
        }
    }

    private static func format(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String((value * 100).rounded() / 100)
    }
}
