import Foundation

/// Text on its way to a person (a terminal, a log, a web page), made unable to drive what
/// shows it: control characters (C0, DEL, C1) and Unicode's bidirectional marks, embeddings,
/// overrides and isolates are shown escaped (`\x1B`, `\u{202E}`), so a song name, a tag, a
/// worker id or a message a client or a worker sent cannot move the cursor, clear the screen,
/// set the window title, colour the output, forge a line or reorder what follows it. The
/// library stores names as they were sent; only what is shown is escaped. The `tactus`
/// commands, their logs and the web gateway all escape through this one definition.
public enum ShownText {
    /// `text` with every control character escaped; line breaks are kept when
    /// `keepingNewlines` (for text the commands themselves made of several lines).
    public static func escaped(_ text: String, keepingNewlines: Bool = false) -> String {
        guard text.unicodeScalars.contains(where: { isControl($0) && !(keepingNewlines && $0 == "\n") }) else { return text }
        var escaped = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if !isControl(scalar) || (keepingNewlines && scalar == "\n") {
                escaped.append(scalar)
            } else {
                escaped.append(contentsOf: code(scalar).unicodeScalars)
            }
        }
        return String(escaped)
    }

    /// `line` for a JSON Lines output: the C1 controls and bidirectional overrides JSON lets
    /// through raw are written as `\uXXXX` escapes, which decode to the same text (JSON
    /// escapes the C0 controls itself, and these characters can only occur inside strings).
    public static func jsonSafe(_ line: String) -> String {
        guard line.unicodeScalars.contains(where: isControl) else { return line }
        var safe = String.UnicodeScalarView()
        for scalar in line.unicodeScalars {
            if isControl(scalar) {
                safe.append(contentsOf: String(format: "\\u%04x", scalar.value).unicodeScalars)
            } else {
                safe.append(scalar)
            }
        }
        return String(safe)
    }

    /// C0 controls, DEL, C1 controls, and the bidirectional embeddings, overrides and isolates.
    public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    /// How `scalar`, a control character, is shown: `\xNN` up to U+00FF, `\u{NNNN}` above.
    public static func code(_ scalar: Unicode.Scalar) -> String {
        scalar.value <= 0xFF ? String(format: "\\x%02X", scalar.value) : String(format: "\\u{%04X}", scalar.value)
    }
}
