import ArgumentParser
import Foundation

extension Tactus {
    /// Runs the command line like ArgumentParser's default `main()`, except that usage errors
    /// (unknown options, missing or invalid arguments) exit with status 2, the shell
    /// convention, instead of 64. Commands exit 0 on success and 1 on failure.
    static func main() {
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch {
            guard exitCode(for: error) == .validationFailure else { exit(withError: error) }
            FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
            Foundation.exit(2)
        }
    }
}
