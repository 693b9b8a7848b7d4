/// Text made safe for an XML 1.0 document, in an attribute's value or between tags: the five
/// special characters as entities, tabs and line breaks as character references (so that an
/// attribute keeps them through the parser's normalisation), and the characters XML 1.0 cannot
/// hold at all (the other control characters, U+FFFE, U+FFFF) dropped.
public enum XMLText {
    public static func escaped(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&apos;"
            case "\t", "\n", "\r": escaped += "&#\(scalar.value);"
            default:
                if scalar.value >= 0x20, scalar.value != 0xFFFE, scalar.value != 0xFFFF {
                    escaped.unicodeScalars.append(scalar)
                }
            }
        }
        return escaped
    }
}
