/// Text from someone else (a file's tags, a worker's error message) kept to a length a listing,
/// a log line or an event may carry.
public enum BoundedText {
    /// `text` cut to `limit` Unicode scalars, the last of them "…" when it was longer. Scalars,
    /// not characters: one character may hold any number of combining accents.
    public static func cut(_ text: String, toScalars limit: Int) -> String {
        let scalars = text.unicodeScalars
        guard limit > 0, scalars.count > limit else { return text }
        var cut = String.UnicodeScalarView(scalars.prefix(limit - 1))
        cut.append("…")
        return String(cut)
    }
}
