import ArgumentParser
import Foundation
import TactusModel

extension Tactus {
    /// Runs the command line with Tactus's exit codes: 0 success, 1 failure, 2 usage error
    /// (a wrong option, a missing argument, a value that does not parse). ArgumentParser's
    /// own code for usage errors is 64; this replaces only that one.
    static func main() {
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch {
            let code = exitCode(for: error)
            if code == .validationFailure {
                FileHandle.standardError.write(Data((ShownText.escaped(fullMessage(for: error), keepingNewlines: true) + "\n").utf8))
                Foundation.exit(2)
            }
            // A failure's message may quote what a server or a file said: it is shown escaped, on
            // one line, but for the lines a command's own failure lists (each escaped already).
            if code == .failure, !(error is ExitCode) {
                let message = fullMessage(for: error)
                if !message.isEmpty {
                    FileHandle.standardError.write(
                        Data((ShownText.escaped(message, keepingNewlines: error is CommandFailure) + "\n").utf8))
                }
                Foundation.exit(code.rawValue)
            }
            exit(withError: error)
        }
    }
}
