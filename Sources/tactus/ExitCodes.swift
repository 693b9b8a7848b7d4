import ArgumentParser
import Foundation

extension Tactus {
    /// Runs the command line with Tactus's exit codes: 0 success, 1 failure, 2 usage error
    /// (a wrong option, a missing argument, a value that does not parse). ArgumentParser's
    /// own code for usage errors is 64; this replaces only that one.
    static func main() {
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch {
            if exitCode(for: error) == .validationFailure {
                FileHandle.standardError.write(Data((TerminalText.escaped(fullMessage(for: error), keepingNewlines: true) + "\n").utf8))
                Foundation.exit(2)
            }
            exit(withError: error)
        }
    }
}
