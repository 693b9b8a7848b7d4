import Foundation
import TactusModel

/// The commands' `print`, in place of the standard library's in this module: what it prints is
/// one line, shown through ``TactusModel/ShownText/escaped(_:keepingNewlines:)`` with its line
/// breaks escaped too, so a song's name, a tag or a server's message cannot forge a line of
/// output. Text the command made of several lines is printed with ``print(lines:)``.
func print(_ items: Any..., separator: String = " ", terminator: String = "\n") {
    let text = items.map { String(describing: $0) }.joined(separator: separator)
    Swift.print(ShownText.escaped(text), terminator: terminator)
}

/// Text the command made of several lines, one `print` each: a line break inside a line (a
/// name's) is shown escaped, never started.
func print(lines: [String]) {
    for line in lines { print(line) }
}

/// One line of JSON Lines output: the controls JSON lets through raw inside strings (C1,
/// bidirectional overrides) written as `\uXXXX` escapes (``TactusModel/ShownText/jsonSafe(_:)``),
/// never as the `\xNN` of ``print(_:separator:terminator:)``, which is not JSON.
func print(jsonLine line: String) {
    Swift.print(ShownText.jsonSafe(line))
}

/// `line` on standard error, shown escaped as ``print(_:separator:terminator:)`` shows it.
func printError(_ line: String) {
    FileHandle.standardError.write(Data((ShownText.escaped(line) + "\n").utf8))
}
