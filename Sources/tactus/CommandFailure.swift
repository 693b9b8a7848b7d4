import TactusClient
import TactusModel
import TactusProtocol

/// A command that could not do its job: printed as `Error: <message>`, exit status 1.
struct CommandFailure: Error, CustomStringConvertible {
    let description: String

    init(_ message: String) {
        description = message
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
    } catch ClientError.rejected(let error) {
        throw CommandFailure(error.message)
    } catch let error as ClientError {
        throw CommandFailure(error.description)
    }
}
