import Foundation
import TactusTestSupport
import TactusZMQ
import Testing

@Suite("Poller and shutdown") struct PollerAndShutdownTests {
    @Test func pollReportsOnlyTheReadySocketsAndTimesOut() throws {
        let context = try ZMQContext(socketLinger: .zero)
        let frontend = try context.socket(.router)
        let backend = try context.socket(.router)
        let frontendEndpoint = inprocEndpoint("front"), backendEndpoint = inprocEndpoint("back")
        try frontend.bind(frontendEndpoint)
        try backend.bind(backendEndpoint)
        var poller = ZMQPoller()
        poller.add(frontend)
        poller.add(backend)

        let clock = ContinuousClock()
        let start = clock.now
        let idle = try poller.poll(timeout: .milliseconds(120))
        #expect(idle.isEmpty)
        #expect(clock.now - start >= .milliseconds(110))

        let worker = try context.socket(.dealer)
        try worker.connect(backendEndpoint)
        try worker.send([bytes("READY")])
        let ready = try poller.poll(timeout: .seconds(2))
        #expect(ready.contains(backend))
        #expect(!ready.contains(frontend))
        #expect(ready.events(of: backend) == .readable)
        #expect(try backend.tryReceive()?.last == bytes("READY"))

        var writable = ZMQPoller()
        writable.add(worker, events: [.readable, .writable])
        #expect(try writable.poll(timeout: .zero).events(of: worker) == .writable)

        poller.remove(backend)
        try worker.send([bytes("again")])
        #expect(try poller.poll(timeout: .milliseconds(50)).isEmpty)
    }

    @Test func pollWakesForAReadableDescriptorBesideTheSockets() throws {
        let context = try ZMQContext(socketLinger: .zero)
        let socket = try context.socket(.router)
        try socket.bind(inprocEndpoint("beside-a-pipe"))
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        let (readEnd, writeEnd) = (ends[0], ends[1])
        defer { close(readEnd); close(writeEnd) }
        var poller = ZMQPoller()
        poller.add(socket)
        poller.add(readableDescriptor: readEnd)

        #expect(try poller.poll(timeout: .milliseconds(50)).isEmpty)
        // The byte is written once this thread is blocked in the poll.
        let polling = try LinuxThread.current()
        let writer = Thread {
            try? Wait.until("the poll to block", timeout: .seconds(5), poll: .milliseconds(1)) { polling.isBlocked }
            var byte: UInt8 = 1
            _ = write(writeEnd, &byte, 1)
        }
        writer.start()
        let clock = ContinuousClock()
        let start = clock.now
        let ready = try poller.poll(timeout: .seconds(5))
        #expect(clock.now - start < .seconds(4))
        #expect(ready.contains(readableDescriptor: readEnd))
        #expect(!ready.contains(socket))
        #expect(!ready.isEmpty)
        var byte: UInt8 = 0
        #expect(read(readEnd, &byte, 1) == 1)
        #expect(try poller.poll(timeout: .zero).isEmpty)
    }

    @Test func shutdownWakesABlockedReceiveWithETERMAndTheContextEnds() throws {
        var context: ZMQContext? = try ZMQContext(socketLinger: .zero)
        let shared = try #require(context)
        let outcome = Locked<ZMQError?>(nil)
        let receiving = Locked<LinuxThread?>(nil)
        let started = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        let endpoint = inprocEndpoint()
        let thread = Thread {
            do throws(ZMQError) {
                let socket = try shared.socket(.router)
                try socket.bind(endpoint)
                receiving.withLock { $0 = try? LinuxThread.current() }
                started.signal()
                _ = try socket.receive()
            } catch {
                outcome.withLock { $0 = error }
            }
            finished.signal()
        }
        thread.start()
        #expect(started.wait(timeout: .now() + 5) == .success)
        let blocked = try #require(receiving.withLock { $0 }, "the receiving thread's id")
        try Wait.until("the receiving thread to block in receive") { blocked.isBlocked }
        shared.shutdown()
        #expect(finished.wait(timeout: .now() + 5) == .success)
        #expect(outcome.withLock { $0?.isTerminated } == true)

        // After shutdown every call fails the same way, and the context terminates once
        // the last socket is gone (this would hang if a socket were still open).
        do {
            _ = try shared.socket(.dealer)
            Issue.record("a socket was created after shutdown")
        } catch {
            #expect(error.isTerminated)
        }
        context = nil
        #expect(context == nil)
    }

    @Test func libraryVersionIsTheInstalledOne() {
        let version = ZMQLibrary.version
        #expect(version.major == 4 && version.minor >= 3)
    }
}
