/// A number as a person writes one in a query, an option or a form: an optional sign, digits,
/// and an optional decimal point with digits after it (`16`, `-0.5`, `120.25`, `.5`). Swift's
/// `Double(String)` also reads hexadecimal (`0x10` is 16, `0x1p4` too), exponents (`1.6e1`),
/// `inf` and `nan`: none of those is taken for a tempo, a tolerance or a duration.
public enum DecimalNumber {
    /// The value of `text` when it is a plain decimal number, else nil.
    public static func parse(_ text: some StringProtocol) -> Double? {
        let signed = text.utf8.first.map { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") } ?? false
        var digits = 0, points = 0
        for byte in text.utf8.dropFirst(signed ? 1 : 0) {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digits += 1
            case UInt8(ascii: "."): points += 1
            default: return nil
            }
        }
        guard digits > 0, points <= 1 else { return nil }
        return Double(String(text))
    }
}
