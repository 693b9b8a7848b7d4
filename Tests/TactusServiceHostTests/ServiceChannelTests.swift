import Foundation
import TactusServiceHost
import TactusTestSupport
import Testing

/// The channel to a service host: parts and open files cross it, and what comes back is bounded.
@Suite struct ServiceChannelTests {
    @Test func partsAndOpenFilesCrossTheChannel() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-channel")
        let path = directory.file("file.txt")
        try Data("the file's bytes".utf8).write(to: URL(fileURLWithPath: path))
        let file = open(path, O_RDONLY | O_CLOEXEC)
        defer { close(file) }
        let (left, right) = try ServiceChannel.pair()
        let big = [UInt8](repeating: 7, count: 3 << 20)
        let sender = Thread {
            try? left.send(ServiceChannel.Message(parts: [Array("probe".utf8), [], big], descriptors: [file]))
        }
        sender.start()
        let message = try right.receive(limits: ServiceChannel.Limits(maxBytes: 4 << 20), deadline: .now + .seconds(10))
        defer { message.closeDescriptors() }
        #expect(message.parts.count == 3 && message.parts[0] == Array("probe".utf8) && message.parts[1].isEmpty && message.parts[2] == big)
        #expect(message.descriptors.count == 1 && message.descriptors[0] != file)
        let copy = try String(contentsOfFile: "/proc/self/fd/\(message.descriptors[0])", encoding: .utf8)
        #expect(copy == "the file's bytes")
    }

    @Test func aMessageOverTheLimitsIsRefused() throws {
        let (left, right) = try ServiceChannel.pair()
        try left.send(ServiceChannel.Message(parts: [[UInt8](repeating: 1, count: 2000)]))
        #expect(throws: ServiceChannelError.invalid("a message of more than 1000 bytes")) {
            try right.receive(limits: ServiceChannel.Limits(maxBytes: 1000), deadline: .now + .seconds(5))
        }
        let (other, end) = try ServiceChannel.pair()
        try other.send(ServiceChannel.Message(parts: Array(repeating: [], count: 9)))
        #expect(throws: ServiceChannelError.invalid("9 parts, over the limit of 8")) {
            try end.receive(limits: ServiceChannel.Limits(maxBytes: 1000), deadline: .now + .seconds(5))
        }
    }

    @Test func silenceEndsAtTheDeadlineAndAClosedEndIsSaid() throws {
        let (left, right) = try ServiceChannel.pair()
        let started = ContinuousClock.now
        #expect(throws: ServiceChannelError.timedOut) {
            try right.receive(limits: ServiceChannel.Limits(maxBytes: 1000), deadline: .now + .milliseconds(100))
        }
        #expect(ContinuousClock.now - started < .seconds(2))
        shutdown(left.descriptor, Int32(SHUT_RDWR))
        #expect(throws: ServiceChannelError.closed) {
            try right.receive(limits: ServiceChannel.Limits(maxBytes: 1000), deadline: .now + .seconds(5))
        }
    }
}
