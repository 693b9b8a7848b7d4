import CDescriptorPassing
import Foundation
import TactusProtocol

/// One end of the Unix stream socket between the coordinator and a service host process: it
/// carries messages of a few byte parts each (the service, its arguments as JSON, the client's
/// bytes), with open file descriptors attached to a message when a part names a file (a song
/// below a library root, an upload's file), so that the host reads what the coordinator opened
/// and never a path again.
///
/// A message is `TSH1`, the part count (UInt32, little-endian), each part's length (UInt64),
/// then the parts' bytes; its descriptors travel with its first bytes (SCM_RIGHTS).
///
/// Reading is bounded: at most ``Limits/maxParts`` parts and ``Limits/maxBytes`` bytes in all,
/// and, with a deadline, never waiting past it. The host at the other end parses hostile
/// content, so what it sends back is checked like anything a peer sends.
public final class ServiceChannel: @unchecked Sendable {
    /// What a message read from the channel may hold.
    public struct Limits: Sendable, Hashable {
        public var maxParts: Int
        public var maxBytes: Int

        public init(maxParts: Int = 8, maxBytes: Int) {
            self.maxParts = maxParts
            self.maxBytes = maxBytes
        }
    }

    /// A message: its parts and the descriptors that came with it (the receiver owns them).
    public struct Message: Sendable {
        public var parts: [[UInt8]]
        public var descriptors: [Int32]

        public init(parts: [[UInt8]], descriptors: [Int32] = []) {
            self.parts = parts
            self.descriptors = descriptors
        }

        /// Closes the descriptors that came with the message.
        public func closeDescriptors() {
            for descriptor in descriptors { close(descriptor) }
        }
    }

    static let magic: [UInt8] = Array("TSH1".utf8)

    /// The most descriptors one message carries.
    public static let maxDescriptors = Int(TACTUS_MAX_PASSED_DESCRIPTORS)

    /// The socket; closed with the channel.
    public let descriptor: Int32

    /// A channel over `descriptor`, a connected Unix stream socket, which it owns from now on.
    public init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    deinit {
        close(descriptor)
    }

    /// A connected pair of channels (socketpair, close-on-exec).
    public static func pair() throws(ServiceChannelError) -> (ServiceChannel, ServiceChannel) {
        var descriptors: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &descriptors) == 0 else {
            throw .failed("socketpair", errno)
        }
        return (ServiceChannel(descriptor: descriptors[0]), ServiceChannel(descriptor: descriptors[1]))
    }

    /// Sends `message`: its parts, and its descriptors attached (they stay open here).
    public func send(_ message: Message) throws(ServiceChannelError) {
        guard message.descriptors.count <= Int(TACTUS_MAX_PASSED_DESCRIPTORS) else {
            throw .invalid("a message carries at most \(TACTUS_MAX_PASSED_DESCRIPTORS) descriptors")
        }
        var header = Self.magic
        header += withUnsafeBytes(of: UInt32(message.parts.count).littleEndian, Array.init)
        for part in message.parts { header += withUnsafeBytes(of: UInt64(part.count).littleEndian, Array.init) }
        let sent = header.withUnsafeBytes { bytes in
            message.descriptors.withUnsafeBufferPointer { descriptors in
                tactus_send_with_descriptors(
                    descriptor, bytes.baseAddress, bytes.count, descriptors.baseAddress, Int32(descriptors.count))
            }
        }
        guard sent >= 0 else { throw .failed("sendmsg", errno) }
        try write(header[sent...])
        for part in message.parts { try write(part[...]) }
    }

    /// Reads the next message, waiting at most until `deadline` (for ever when nil).
    ///
    /// - Throws: ``ServiceChannelError/closed`` when the other end closed the channel before a
    ///   message began, ``ServiceChannelError/timedOut`` past the deadline, ``ServiceChannelError/invalid(_:)``
    ///   for a message that breaks the format or the limits.
    public func receive(limits: Limits, deadline: ContinuousClock.Instant? = nil) throws(ServiceChannelError) -> Message {
        var descriptors = [Int32](repeating: -1, count: Int(TACTUS_MAX_PASSED_DESCRIPTORS))
        var first = [UInt8](repeating: 0, count: 8)
        var count: Int32 = 0
        try wait(until: deadline)
        let received = first.withUnsafeMutableBytes { bytes in
            tactus_receive_with_descriptors(
                descriptor, bytes.baseAddress, bytes.count, &descriptors, Int32(descriptors.count), &count)
        }
        guard received >= 0 else { throw .failed("recvmsg", errno) }
        guard received > 0 else { throw .closed }
        let message = Message(parts: [], descriptors: Array(descriptors.prefix(Int(count))))
        do throws(ServiceChannelError) {
            try read(into: &first, from: received, until: deadline)
            guard Array(first[0..<4]) == Self.magic else { throw .invalid("a message does not begin with TSH1") }
            let partCount = Int(first[4..<8].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }.littleEndian)
            guard partCount <= limits.maxParts else { throw .invalid("\(partCount) parts, over the limit of \(limits.maxParts)") }
            var lengths = [UInt8](repeating: 0, count: partCount * 8)
            try read(into: &lengths, from: 0, until: deadline)
            var sizes: [Int] = []
            var total = 0
            for index in 0..<partCount {
                let size = lengths[(index * 8)..<(index * 8 + 8)].withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }.littleEndian
                guard size <= UInt64(limits.maxBytes - total) else {
                    throw .invalid("a message of more than \(limits.maxBytes) bytes")
                }
                sizes.append(Int(size))
                total += Int(size)
            }
            var parts: [[UInt8]] = []
            for size in sizes {
                var part = [UInt8](repeating: 0, count: size)
                try read(into: &part, from: 0, until: deadline)
                parts.append(part)
            }
            return Message(parts: parts, descriptors: message.descriptors)
        } catch {
            message.closeDescriptors()
            throw error
        }
    }

    /// Fills `buffer` from `offset` on.
    private func read(into buffer: inout [UInt8], from offset: Int, until deadline: ContinuousClock.Instant?) throws(ServiceChannelError) {
        var filled = offset
        while filled < buffer.count {
            try wait(until: deadline)
            let count = buffer.withUnsafeMutableBytes { bytes in
                Glibc.read(descriptor, bytes.baseAddress! + filled, bytes.count - filled)
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw .failed("read", errno)
            }
            guard count > 0 else { throw .closed }
            filled += count
        }
    }

    /// Writes all of `bytes`.
    private func write(_ bytes: ArraySlice<UInt8>) throws(ServiceChannelError) {
        var written = bytes.startIndex
        while written < bytes.endIndex {
            let count = bytes[written...].withUnsafeBytes { chunk in
                Glibc.send(descriptor, chunk.baseAddress, chunk.count, Int32(MSG_NOSIGNAL))
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw errno == EPIPE || errno == ECONNRESET ? .closed : .failed("send", errno)
            }
            written += count
        }
    }

    /// Waits until the socket is readable, or throws ``ServiceChannelError/timedOut`` at `deadline`.
    private func wait(until deadline: ContinuousClock.Instant?) throws(ServiceChannelError) {
        guard let deadline else { return }
        while true {
            let left = deadline - .now
            guard left > .zero else { throw .timedOut }
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(min(max(left.seconds * 1000, 1), 60_000).rounded(.up))
            let ready = poll(&entry, 1, milliseconds)
            if ready > 0 { return }
            if ready < 0 && errno != EINTR { throw .failed("poll", errno) }
        }
    }
}

/// What went wrong on a ``ServiceChannel``.
public enum ServiceChannelError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The other end closed the channel (its process ended).
    case closed
    /// Nothing came before the deadline.
    case timedOut
    /// A message that breaks the channel's format or limits.
    case invalid(String)
    /// A system call failed with `errno`.
    case failed(String, Int32)

    public var description: String {
        switch self {
        case .closed: "the other end closed the channel"
        case .timedOut: "no answer in time"
        case .invalid(let detail): "an invalid message: \(detail)"
        case .failed(let call, let code): "\(call) failed: \(String(cString: strerror(code)))"
        }
    }
}
