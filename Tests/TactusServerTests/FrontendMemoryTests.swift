import Foundation
import Synchronization
import TactusProtocol
import TactusTestSupport
import Testing

/// Many connections sending large frames to `tactus serve` at once, with its default settings:
/// libzmq holds what each connection sends until a message is whole, so the frontend takes no
/// frame over 1 MiB (larger content comes as an upload) and refuses a larger one as soon as its
/// size is read. The coordinator's memory stays where it was and other clients are answered.
@Suite struct FrontendMemoryTests {
    /// Forty connections each announce an 8 MiB frame and send 6 MiB of it, then wait: 240 MiB
    /// that a frontend taking frames of that size holds for as long as the connections stay.
    /// (A frame kept unfinished shows what libzmq holds whatever the coordinator's speed:
    /// finished messages are taken, and freed, as fast as the coordinator reads them.)
    @Test func unfinishedLargeFramesOfManyConnectionsHoldNoMemory() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-frontend-memory")
        let server = try ServeProcess(dataDirectory: directory.path, extraArguments: ["--no-local-workers"])
        defer { _ = server.stop() }
        guard try ServerClient(server.endpoints).request(.status(StatusRequest())).answer(StatusCommand.self) != nil else {
            Issue.record("no status from the server")
            return
        }
        let idle = ServerWatch.residentBytes(of: server.processID)
        let watch = ServerWatch(server: server)
        watch.start()
        var watching = true
        defer { if watching { _ = watch.stop() } }

        let frameBytes = 8 << 20
        let sentBytes = 6 << 20
        var peers: [RawZMTPPeer] = []
        defer { peers.forEach { $0.close() } }
        for _ in 0..<40 {
            let peer = try RawZMTPPeer(endpoint: server.endpoints.frontend)
            peer.beginFrame(bytes: frameBytes)
            peers.append(peer)
        }
        let piece = [UInt8](repeating: 0x5A, count: 1 << 16)
        for _ in 0..<(sentBytes / piece.count) {
            for peer in peers { peer.send(piece) }
        }
        // What the server took of each connection's bytes, or all it will take (the rest was refused).
        try Wait.until("the server to read or refuse the frames", timeout: .seconds(30)) {
            peers.allSatisfy { $0.isRefused || $0.unreadBytes == 0 }
        }
        Thread.sleep(forTimeInterval: 1)  // two more heartbeats of queries with the frames held
        let held = ServerWatch.residentBytes(of: server.processID) - idle
        let refused = peers.filter(\.isRefused).count
        let figures = watch.stop()
        watching = false
        #expect(held < 64 << 20, "the coordinator holds \(held >> 20) MiB more with the frames unfinished (\(refused) of 40 connections refused)")
        #expect(figures.peakResidentBytes - idle < 100 << 20, "the coordinator reached \(figures.peakResidentBytes >> 20) MiB from \(idle >> 20) MiB")
        #expect(figures.slowestQuery < .seconds(1), "a query took \(figures.slowestQuery)")
        #expect(refused == 40, "\(refused) of 40 connections were refused their 8 MiB frame")
        guard try ServerClient(server.endpoints).request(.status(StatusRequest())).answer(StatusCommand.self) != nil else {
            Issue.record("no status after the frames")
            return
        }
    }
}

/// A client speaking ZMTP 3.0 itself over TCP (NULL mechanism, as a DEALER), so that a test
/// can send part of a frame and stop, as no ZeroMQ socket does.
final class RawZMTPPeer {
    private let descriptor: Int32

    /// Connects to `endpoint` (`tcp://127.0.0.1:PORT`) and sends the greeting and READY.
    init(endpoint: String) throws {
        guard endpoint.hasPrefix("tcp://127.0.0.1:"), let port = UInt16(endpoint.split(separator: ":").last ?? "") else {
            throw ServerTestError("not a loopback TCP endpoint: \(endpoint)")
        }
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw ServerTestError("socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close()
            throw ServerTestError("connect to \(endpoint): \(String(cString: strerror(errno)))")
        }
        // Greeting: signature, version 3.0, mechanism NULL, not a server, filler.
        var greeting: [UInt8] = [0xFF] + [UInt8](repeating: 0, count: 8) + [0x7F, 3, 0]
        greeting += Array("NULL".utf8) + [UInt8](repeating: 0, count: 16) + [0] + [UInt8](repeating: 0, count: 31)
        // READY with Socket-Type DEALER.
        let ready: [UInt8] = [5] + Array("READY".utf8) + [11] + Array("Socket-Type".utf8) + [0, 0, 0, 6] + Array("DEALER".utf8)
        send(greeting + [0x04, UInt8(ready.count)] + ready)
    }

    /// Sends the header of a message's last frame of `bytes` bytes (its bytes to follow).
    func beginFrame(bytes: Int) {
        send([0x02] + (0..<8).reversed().map { UInt8(truncatingIfNeeded: UInt64(bytes) >> (8 * UInt64($0))) })
    }

    /// Sends `bytes`, ignoring a connection the server has dropped.
    func send(_ bytes: [UInt8]) {
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes { Foundation.send(descriptor, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL)) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return }
            sent += count
        }
    }

    /// Whether the server has closed the connection (its reset, or its end, is waiting).
    var isRefused: Bool {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(descriptor, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if count > 0 { continue }  // the server's greeting and READY
            return count == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)
        }
    }

    /// The bytes sent that the server's system has not taken yet (`SIOCOUTQ`).
    var unreadBytes: Int {
        var count: Int32 = 0
        let result = withUnsafeMutablePointer(to: &count) { ioctl(descriptor, UInt(TIOCOUTQ), $0) }
        return result == 0 ? Int(count) : 0
    }

    func close() {
        _ = Foundation.close(descriptor)
    }
}
