/// One command of the client protocol: its name, what its request and its answer hold, and
/// how each travels as frames after the header (`TACTUS1`, the command, the request id, and
/// for a reply the status).
///
/// Most commands carry one JSON body each way, and need only their name and types:
///
/// ```swift
/// enum StatusCommand: ClientCommand {
///     static let name = "status"
///     typealias Request = StatusRequest
///     typealias Answer = StatusResponse
/// }
/// ```
///
/// A command with binary frames (a song's bytes, an envelope) writes and reads them itself in
/// ``frames(of:)-(Request)`` and ``request(from:limits:)``. The coordinator finds the service
/// that answers a command by its name in a ``ClientCommands`` table; clients and the coordinator
/// decode with the same table, so adding a command is its definition, its entry in the table and
/// its service.
public protocol ClientCommand: Sendable {
    /// What a client sends.
    associatedtype Request: Sendable & Hashable
    /// What the coordinator answers when the request succeeds (a failure is an ``ErrorBody``).
    associatedtype Answer: Sendable & Hashable

    /// The command frame: lowercase ASCII, unique in a table.
    static var name: String { get }
    /// The frames of `request` after the header: its JSON body, then any binary frames.
    static func frames(of request: Request) throws(ProtocolError) -> [[UInt8]]
    /// Reads a request from the frames after its header, validating it.
    static func request(from reader: inout FrameReader, limits: ProtocolLimits) throws(ProtocolError) -> Request
    /// The frames of `answer` after the header and the `ok` status.
    static func frames(ofAnswer answer: Answer) throws(ProtocolError) -> [[UInt8]]
    /// Reads an answer from the frames after its header and status, validating it.
    static func answer(from reader: inout FrameReader, limits: ProtocolLimits) throws(ProtocolError) -> Answer
    /// Whether sending `request` twice does no more than sending it once, so that a client may
    /// send it again when a connection was lost (SPEC section 8). True unless a command says not.
    static func isIdempotent(_ request: Request) -> Bool
}

extension ClientCommand {
    public static func isIdempotent(_ request: Request) -> Bool { true }
}

extension ClientCommand {
    /// A JSON body, then `bytes` as one binary frame when there are any: the frames of the
    /// commands whose messages carry a song, a recording, an envelope or a file.
    public static func frames(_ body: some WireBody, then bytes: [UInt8]?) throws(ProtocolError) -> [[UInt8]] {
        [try JSONBody.encode(body, command: name)] + (bytes.map { [$0] } ?? [])
    }
}

extension ClientCommand where Request: WireBody {
    /// The request as its JSON body alone.
    public static func frames(of request: Request) throws(ProtocolError) -> [[UInt8]] {
        [try JSONBody.encode(request, command: name)]
    }

    /// A JSON body and no other frame.
    public static func request(from reader: inout FrameReader, limits: ProtocolLimits) throws(ProtocolError) -> Request {
        try reader.onlyBody(Request.self, limits: limits)
    }
}

extension ClientCommand where Answer: WireBody {
    /// The answer as its JSON body alone.
    public static func frames(ofAnswer answer: Answer) throws(ProtocolError) -> [[UInt8]] {
        [try JSONBody.encode(answer, command: name)]
    }

    /// A JSON body and no other frame.
    public static func answer(from reader: inout FrameReader, limits: ProtocolLimits) throws(ProtocolError) -> Answer {
        try reader.onlyBody(Answer.self, limits: limits)
    }
}

/// The commands a coordinator answers and a client may send, by name: the protocol's one
/// table of commands (``standard``), which a test or an extension may extend with
/// ``adding(_:)``.
public struct ClientCommands: Sendable {
    private var byName: [String: any ClientCommand.Type]
    /// The names in the order the commands were given.
    public private(set) var names: [String]

    /// A table of `commands`, whose names must differ.
    public init(_ commands: [any ClientCommand.Type]) {
        byName = [:]
        names = []
        for command in commands { add(command) }
    }

    /// This table with `command` added.
    public func adding(_ command: any ClientCommand.Type) -> ClientCommands {
        var table = self
        table.add(command)
        return table
    }

    private mutating func add(_ command: any ClientCommand.Type) {
        precondition(byName[command.name] == nil, "two commands are named \(command.name)")
        precondition(
            !command.name.isEmpty && command.name.utf8.allSatisfy { (0x61...0x7A).contains($0) || $0 == 0x2D },
            "a command's name is lowercase ASCII letters and hyphens: \(command.name)")
        byName[command.name] = command
        names.append(command.name)
    }

    /// The command named `name`, if the table has it.
    public subscript(name: String) -> (any ClientCommand.Type)? { byName[name] }

    /// The command named by `frame`, exactly (no other spelling of the same name).
    func command(named frame: [UInt8]) -> (any ClientCommand.Type)? {
        guard let command = byName[String(decoding: frame, as: UTF8.self)], Array(command.name.utf8) == frame else { return nil }
        return command
    }
}

/// A request or an answer of some command, with the command that defines it: what lets a
/// message carry any command's values and still be encoded, compared and read back typed.
struct CommandValue: @unchecked Sendable, Hashable {
    // Unchecked: `value` holds only a `Request` or an `Answer` of `command`, which are Sendable.
    let command: any ClientCommand.Type
    let value: AnyHashable

    init<C: ClientCommand>(_ command: C.Type, request: C.Request) {
        self.command = command
        value = AnyHashable(request)
    }

    init<C: ClientCommand>(_ command: C.Type, answer: C.Answer) {
        self.command = command
        value = AnyHashable(answer)
    }

    /// The value as `C`'s `T`, when this value belongs to `C`.
    func typed<C: ClientCommand, T>(_ command: C.Type, as type: T.Type) -> T? {
        guard ObjectIdentifier(self.command) == ObjectIdentifier(command) else { return nil }
        return value.base as? T
    }

    static func == (lhs: CommandValue, rhs: CommandValue) -> Bool { ObjectIdentifier(lhs.command) == ObjectIdentifier(rhs.command) && lhs.value == rhs.value }

    func hash(into hasher: inout Hasher) {
        hasher.combine(command.name)
        hasher.combine(value)
    }
}

extension CommandValue: CustomStringConvertible {
    /// `status: StatusRequest(...)`: the command and its value, for logs and test reports.
    var description: String { "\(command.name): \(value.base)" }
}

extension ClientCommand {
    /// The frames of a request held by a ``CommandValue`` of this command.
    static func frames(ofRequestIn value: CommandValue) throws(ProtocolError) -> [[UInt8]] {
        try frames(of: value.value.base as! Request)
    }

    /// The frames of an answer held by a ``CommandValue`` of this command.
    static func frames(ofAnswerIn value: CommandValue) throws(ProtocolError) -> [[UInt8]] {
        try frames(ofAnswer: value.value.base as! Answer)
    }

    /// Whether the request held by a ``CommandValue`` of this command is idempotent.
    static func isIdempotent(requestIn value: CommandValue) -> Bool {
        isIdempotent(value.value.base as! Request)
    }

    static func decodeRequest(_ reader: inout FrameReader, limits: ProtocolLimits) throws(ProtocolError) -> CommandValue {
        CommandValue(self, request: try request(from: &reader, limits: limits))
    }

    static func decodeAnswer(_ reader: inout FrameReader, limits: ProtocolLimits) throws(ProtocolError) -> CommandValue {
        CommandValue(self, answer: try answer(from: &reader, limits: limits))
    }
}
