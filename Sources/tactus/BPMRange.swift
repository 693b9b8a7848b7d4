import ArgumentParser
import TactusModel

/// A closed tempo range written `LO..HI` (for example `120..130`), of plain decimal numbers.
struct BPMRange: ExpressibleByArgument, Sendable {
    let range: ClosedRange<Double>

    init?(argument: String) {
        let parts = argument.components(separatedBy: "..")
        guard parts.count == 2, let lo = DecimalNumber.parse(parts[0]), let hi = DecimalNumber.parse(parts[1]), lo.isFinite, hi.isFinite, lo <= hi
        else { return nil }
        range = lo...hi
    }

    static var defaultValueDescription: String { "LO..HI" }
}
