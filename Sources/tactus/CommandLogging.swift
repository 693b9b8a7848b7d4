import ArgumentParser
import Foundation
import Logging
import TactusModel

extension Logger.Level: @retroactive ExpressibleByArgument {}

/// Logging for the commands: swift-log to standard error, set up once per process.
enum CommandLogging {
    private static let bootstrap: Void = LoggingSystem.bootstrap { EscapingLogHandler(StreamLogHandler.standardError(label: $0)) }

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

/// A log handler writing through another with the message and every metadata value escaped
/// (``ShownText``): a song name or a worker id with control characters or line breaks
/// cannot colour the log, clear the screen, or forge a line of its own.
struct EscapingLogHandler: LogHandler {
    private var handler: StreamLogHandler

    init(_ handler: StreamLogHandler) {
        self.handler = handler
    }

    var metadataProvider: Logger.MetadataProvider? {
        get { handler.metadataProvider }
        set { handler.metadataProvider = newValue }
    }

    var metadata: Logger.Metadata {
        get { handler.metadata }
        set { handler.metadata = newValue }
    }

    var logLevel: Logger.Level {
        get { handler.logLevel }
        set { handler.logLevel = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { handler[metadataKey: key] }
        set { handler[metadataKey: key] = newValue }
    }

    func log(event: LogEvent) {
        var event = event
        event.message = "\(ShownText.escaped(event.message.description))"
        event.metadata = event.metadata?.mapValues(Self.escaped)
        handler.log(event: event)
    }

    private static func escaped(_ value: Logger.Metadata.Value) -> Logger.Metadata.Value {
        switch value {
        case .string(let text): .string(ShownText.escaped(text))
        case .stringConvertible(let value): .string(ShownText.escaped(value.description))
        case .array(let values): .array(values.map(escaped))
        case .dictionary(let values): .dictionary(values.mapValues(escaped))
        }
    }
}
