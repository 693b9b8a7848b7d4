import Foundation
import TactusModel

/// The commands' `print`, in place of the standard library's in this module: everything they
/// print passes through ``TactusModel/ShownText/escaped(_:keepingNewlines:)``.
func print(_ items: Any..., separator: String = " ", terminator: String = "\n") {
    let text = items.map { String(describing: $0) }.joined(separator: separator)
    Swift.print(ShownText.escaped(text, keepingNewlines: true), terminator: terminator)
}
