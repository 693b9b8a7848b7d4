import TactusClient
import TactusModel
import TactusProtocol

/// A command that could not do its job: printed as `Error: <message>`, exit status 1; with
/// `--json`, where a command prints its failures as JSON (``FileFailure``), with its code.
struct CommandFailure: Error, CustomStringConvertible {
    /// The message: one line, unless the command lists something under it (the candidates of
    /// an ambiguous name).
    let lines: [String]
    /// What kind of failure it is, when the command knows (`--json` prints `internal` otherwise).
    let code: ErrorCode?

    init(_ message: String, code: ErrorCode? = nil) {
        lines = [message]
        self.code = code
    }

    init(lines: [String]) {
        self.lines = lines
        code = nil
    }

    /// The lines one under the other, each shown escaped: a line break a name holds is shown
    /// as `\x0A`, never started.
    var description: String {
        lines.map { ShownText.escaped($0) }.joined(separator: "\n")
    }
}

/// A file a command could not handle, as its `--json` prints it: `{file, error: {code, message}}`.
struct FileFailure: Error, Encodable {
    struct Problem: Encodable {
        var code: ErrorCode
        var message: String
    }

    var file: String
    var error: Problem

    init(file: String, code: ErrorCode, message: String) {
        self.file = file
        error = Problem(code: code, message: message)
    }

    /// The failure that `error` stands for: a ``CommandFailure`` with its code (`internal`
    /// without one), anything the library, the server or a decoder says with theirs
    /// (``ErrorBody/init(answering:)``).
    init(file: String, _ error: any Error) {
        if let failure = error as? CommandFailure {
            self.init(file: file, code: failure.code ?? .internal, message: failure.lines.joined(separator: "\n"))
        } else if case ClientError.rejected(let body) = error {
            self.init(file: file, code: body.code, message: body.message)
        } else if let error = error as? ClientError {
            self.init(file: file, code: .server, message: "\(file): \(error.description)")
        } else {
            let body = ErrorBody(answering: error)
            self.init(file: file, code: body.code, message: body.message)
        }
    }
}

extension ErrorCode {
    /// `--json`: the server did not answer, or answered something else than a report or an error.
    static let server = ErrorCode(rawValue: "server")
}

/// Runs `body`; what the library or the server refuses becomes `Error: <message>` on standard
/// error and exit status 1, the same message whichever answered (the server passes the
/// library's message on).
func reportingFailures<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as StoreError {
        throw CommandFailure(error.description)
    } catch let error as ProtocolError {
        throw CommandFailure(error.description, code: error.body.code)
    } catch let error as ErrorBody {
        throw CommandFailure(error.message, code: error.code)
    } catch let error as any CodedError {
        throw CommandFailure(error.description, code: error.code)
    } catch ClientError.rejected(let error) {
        throw CommandFailure(error.message, code: error.code)
    } catch let error as ClientError {
        throw CommandFailure(error.description, code: .server)
    }
}
