import Foundation
import HTTPTypes
import Hummingbird
import TactusClient
import TactusModel
import TactusProtocol

/// A request the gateway answers with an error: the protocol's error body (`code`, `message`,
/// `retry_after_ms`) as JSON, with the HTTP status that fits the code.
public struct HTTPFailure: Error, Sendable, CustomStringConvertible {
    public var status: HTTPResponse.Status
    public var body: ErrorBody

    public init(_ status: HTTPResponse.Status, _ code: ErrorCode, _ message: String, retryAfterMs: Int? = nil) {
        self.status = status
        self.body = ErrorBody(code: code, message: message, retryAfterMs: retryAfterMs)
    }

    public init(_ body: ErrorBody) {
        self.status = Self.status(for: body.code)
        self.body = body
    }

    public var description: String { "\(status.code) \(body.code): \(body.message)" }

    /// The HTTP status of a protocol error code.
    public static func status(for code: ErrorCode) -> HTTPResponse.Status {
        switch code {
        case .badRequest, .invalidParameter, .unknownDetector, .unsupportedVersion, .unknownCommand: .badRequest
        case .notFound: .notFound
        case .busy: .tooManyRequests
        case .tooLarge: .contentTooLarge
        case .forbidden: .forbidden
        case .unavailable: .serviceUnavailable
        case .unsupportedFormat: .unsupportedMediaType
        case .empty, .corrupt, .truncated, .tooShort, .tooLong: .unprocessableContent
        case .noTempo, .tooFar, .badRecording: .unprocessableContent
        default: .internalServerError
        }
    }

    /// The failure of a request to the coordinator.
    public static func from(_ error: any Error) -> HTTPFailure {
        if let failure = error as? HTTPFailure { return failure }
        if let client = error as? ClientError {
            switch client {
            case .rejected(let body): return HTTPFailure(body)
            case .noAnswer, .connectionRefused, .unanswered:
                return HTTPFailure(.gatewayTimeout, .unavailable, "the coordinator did not answer: \(client)", retryAfterMs: 2000)
            case .transport:
                return HTTPFailure(.badGateway, .unavailable, "cannot reach the coordinator: \(client)", retryAfterMs: 2000)
            case .invalidReply, .unexpectedReply, .unencodable:
                return HTTPFailure(.badGateway, .internal, "\(client)")
            }
        }
        if let protocolError = error as? ProtocolError { return HTTPFailure(protocolError.body) }
        if case ClientErrorReply.notFound(let song) = error { return HTTPFailure(.notFound, .notFound, "no song \(song) in the library") }
        return HTTPFailure(.internalServerError, .internal, "\(error)")
    }

    /// The JSON response.
    public func response() -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json; charset=utf-8"
        if let retry = body.retryAfterMs { headers[.retryAfter] = String(max(1, (retry + 999) / 1000)) }
        if status == .unauthorized { headers[.wwwAuthenticate] = "Bearer realm=\"tactus\"" }
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: JSONText.encode(body))))
    }
}

/// JSON encoding as the protocol writes its bodies: snake_case names from the types' coding
/// keys, slashes unescaped, keys sorted.
enum JSONText {
    static func encode<T: Encodable>(_ value: T) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? Array(encoder.encode(value))) ?? Array(#"{"code":"internal","message":"unencodable reply"}"#.utf8)
    }

    static func response<T: Encodable>(_ value: T, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: encode(value))))
    }
}
