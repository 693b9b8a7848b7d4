import Hummingbird
import TactusModel
import TactusProtocol

/// The query string of a request, read as the protocol's typed fields: a value that does not
/// parse is a `bad-request` naming its parameter.
struct QueryParameters {
    let values: [String: String]

    init(_ request: Request) {
        var values: [String: String] = [:]
        for (name, value) in request.uri.queryParameters { values[String(name)] = String(value) }
        self.values = values
    }

    init(values: [String: String]) { self.values = values }

    /// The text of `name`, nil when absent or empty.
    func text(_ name: String) -> String? {
        guard let value = values[name], !value.isEmpty else { return nil }
        return value
    }

    /// A plain decimal number (``DecimalNumber``: not `0x10`, `1e2` or `inf`).
    func number(_ name: String) throws(HTTPFailure) -> Double? {
        guard let text = text(name) else { return nil }
        guard let value = DecimalNumber.parse(text), value.isFinite else {
            throw HTTPFailure(
                .badRequest, .badRequest, "\(name): '\(Self.shown(text))' is not a plain decimal number (such as 120 or 0.05; no exponent)")
        }
        return value
    }

    func integer(_ name: String) throws(HTTPFailure) -> Int? {
        guard let text = text(name) else { return nil }
        guard let value = Int(text) else {
            throw HTTPFailure(.badRequest, .badRequest, "\(name): '\(Self.shown(text))' is not a whole number")
        }
        return value
    }

    func flag(_ name: String) throws(HTTPFailure) -> Bool? {
        guard let text = text(name) else { return nil }
        switch text.lowercased() {
        case "true", "1", "yes", "on": return true
        case "false", "0", "no", "off": return false
        default: throw HTTPFailure(.badRequest, .badRequest, "\(name): '\(Self.shown(text))' is not true or false")
        }
    }

    /// A value cut short for an error message, its control characters escaped.
    static func shown(_ text: String) -> String {
        ShownText.escaped(text.count > 40 ? String(text.prefix(40)) + "…" : text)
    }
}

extension String {
    /// `self` with `+` read as a space and percent escapes decoded (a form's encoding).
    var formDecoded: String {
        replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? self
    }
}
