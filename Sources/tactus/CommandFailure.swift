import TactusClient
import TactusModel
import TactusProtocol

/// A command that could not do its job: printed as `Error: <message>`, exit status 1.
struct CommandFailure: Error, CustomStringConvertible {
    /// The message: one line, unless the command lists something under it (the candidates of
    /// an ambiguous name).
    let lines: [String]

    init(_ message: String) {
        lines = [message]
    }

    init(lines: [String]) {
        self.lines = lines
    }

    /// The lines one under the other, each shown escaped: a line break a name holds is shown
    /// as `\x0A`, never started.
    var description: String {
        lines.map { ShownText.escaped($0) }.joined(separator: "\n")
    }
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
        throw CommandFailure(error.description)
    } catch let error as ErrorBody {
        throw CommandFailure(error.message)
    } catch let error as any CodedError {
        throw CommandFailure(error.description)
    } catch ClientError.rejected(let error) {
        throw CommandFailure(error.message)
    } catch let error as ClientError {
        throw CommandFailure(error.description)
    }
}
