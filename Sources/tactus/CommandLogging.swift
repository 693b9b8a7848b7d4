import ArgumentParser
import Foundation
import Logging

extension Logger.Level: @retroactive ExpressibleByArgument {}

/// Logging for the commands: swift-log to standard error, set up once per process.
enum CommandLogging {
    private static let bootstrap: Void = LoggingSystem.bootstrap(StreamLogHandler.standardError)

    /// A logger writing to standard error at `level` and above.
    static func logger(_ label: String, level: Logger.Level) -> Logger {
        _ = bootstrap
        var logger = Logger(label: label)
        logger.logLevel = level
        return logger
    }

    /// The path of the running `tactus` executable, to start worker processes.
    static var executablePath: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0]
    }
}
