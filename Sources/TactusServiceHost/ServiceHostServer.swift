import Foundation
import TactusModel
import TactusProtocol

/// What a ``HostedService`` call brings to the host: its arguments (JSON), the client's bytes
/// if they travel with it, and the files it reads, open.
public struct ServiceCallInput: Sendable {
    public var arguments: [UInt8]
    public var payload: [UInt8]?
    /// Open files, which the host may read through `/proc/self/fd/N`; closed after the call.
    public var descriptors: [Int32]

    /// The arguments decoded as `T`.
    public func decode<T: Decodable>(_ type: T.Type) throws(ErrorBody) -> T {
        try ServiceJSON.decode(T.self, from: arguments, what: "the call's arguments")
    }

    /// The `count` descriptors the call must carry.
    public func requireDescriptors(_ count: Int) throws(ErrorBody) -> [Int32] {
        guard descriptors.count == count else {
            throw ErrorBody(code: .internal, message: "the call carries \(descriptors.count) files, not \(count)")
        }
        return descriptors
    }

    /// The result `value` as the call's answer.
    public static func answer<T: Encodable>(_ value: T) throws(ErrorBody) -> [UInt8] {
        try ServiceJSON.encode(value)
    }
}

/// The loop of a service host process: it reads calls from its channel one at a time, runs the
/// handler of each call's service and answers with its result or its error, until the
/// coordinator closes the channel.
///
/// ```swift
/// let server = ServiceHostServer(handlers: [.cadence: { input in try ServiceCallInput.answer(try cadence(input)) }])
/// server.serve(on: ServiceChannel(descriptor: 0), maxCallBytes: 80 << 20)
/// ```
public struct ServiceHostServer: Sendable {
    public typealias Handler = @Sendable (ServiceCallInput) throws(ErrorBody) -> [UInt8]

    public let handlers: [HostedService: Handler]

    public init(handlers: [HostedService: Handler]) {
        self.handlers = handlers
    }

    /// Serves calls until the channel closes or breaks; returns why it stopped.
    @discardableResult
    public func serve(on channel: ServiceChannel, maxCallBytes: Int) -> ServiceChannelError {
        while true {
            let call: ServiceChannel.Message
            do throws(ServiceChannelError) {
                call = try channel.receive(limits: ServiceChannel.Limits(maxParts: 3, maxBytes: maxCallBytes))
            } catch {
                return error
            }
            let answer: [[UInt8]]
            do throws(ErrorBody) {
                answer = [Array("ok".utf8), try run(call)]
            } catch {
                answer = [Array("error".utf8), (try? ServiceJSON.encode(error)) ?? Array(#"{"code":"internal","message":"?"}"#.utf8)]
            }
            call.closeDescriptors()
            // A call that took gigabytes (TagLib listing millions of chunks) leaves them in the
            // heap of a host kept for the next call: they go back to the system now.
            SystemHeap.trim()
            do throws(ServiceChannelError) {
                try channel.send(ServiceChannel.Message(parts: answer))
            } catch {
                return error
            }
        }
    }

    private func run(_ call: ServiceChannel.Message) throws(ErrorBody) -> [UInt8] {
        guard call.parts.count >= 2, let name = String(validating: call.parts[0], as: UTF8.self), let service = HostedService(rawValue: name),
            let handler = handlers[service]
        else {
            throw ErrorBody(code: .internal, message: "this service host runs no service \(String(decoding: (call.parts.first ?? []).prefix(32), as: UTF8.self).debugDescription)")
        }
        return try handler(
            ServiceCallInput(arguments: call.parts[1], payload: call.parts.count > 2 ? call.parts[2] : nil, descriptors: call.descriptors))
    }
}
