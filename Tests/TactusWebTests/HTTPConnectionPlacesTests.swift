import Foundation
import TactusTestSupport
import Testing

@testable import TactusWeb

/// The gateway's connection places (``HTTPConnectionPlaces``): per address and in all, given back
/// when a connection closes; over real sockets, a connection beyond either limit is closed as it
/// opens while the others stay, and closed connections free their places.
@Suite struct HTTPConnectionPlacesTests {
    @Test func placesAreCountedPerAddressAndInAllAndGivenBack() {
        let admission = HTTPConnectionPlaces(maxConnections: 3, maxPerAddress: 2)
        #expect(admission.admit("192.0.2.1") == nil)
        #expect(admission.admit("192.0.2.1") == nil)
        #expect(admission.admit("192.0.2.1")?.contains("the most one address may") == true)
        #expect(admission.admit("192.0.2.2") == nil)
        #expect(admission.admit("192.0.2.3")?.contains("the most it takes") == true)
        #expect(admission.count() == 3 && admission.count(from: "192.0.2.1") == 2)
        _ = admission.release("192.0.2.1")
        #expect(admission.admit("192.0.2.3") == nil)
        #expect(admission.count(from: "192.0.2.1") == 1)
    }

    /// The heap is trimmed once half of a peak of at least 64 connections has closed, once.
    @Test func theHeapIsTrimmedOnceHalfOfALargePeakHasClosed() {
        let admission = HTTPConnectionPlaces(maxConnections: 1000, maxPerAddress: 1000)
        for _ in 0..<100 { #expect(admission.admit("192.0.2.1") == nil) }
        let trims = (0..<100).map { _ in admission.release("192.0.2.1") }
        // At 50 left of the 100; the next peak (50) is too small to trim for.
        #expect(trims.firstIndex(of: true) == 49 && trims.filter { $0 }.count == 1)
    }

    /// A connection from `source` (a loopback address) to `port`, sending nothing.
    static func connect(from source: String, to port: Int) throws -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(.EMFILE) }
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        inet_pton(AF_INET, source, &local.sin_addr)
        var remote = sockaddr_in()
        remote.sin_family = sa_family_t(AF_INET)
        remote.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, "127.0.0.1", &remote.sin_addr)
        let bound = withUnsafePointer(to: &local) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        let connected = withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, connected == 0 else {
            close(descriptor)
            throw POSIXError(.ECONNREFUSED)
        }
        return descriptor
    }

    /// Whether a request for `path` on the connection `descriptor` is answered (within 10 s),
    /// the connection kept open afterwards: proof that the gateway admitted it. The events
    /// stream (`/api/v1/events`) is a request that stays in progress.
    static func answered(_ descriptor: Int32, path: String = "/api/v1/status") -> Bool {
        let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        guard send(descriptor, request, request.count, 0) == request.count else { return false }
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&entry, 1, 10_000) == 1 else { return false }
        var reply = [UInt8](repeating: 0, count: 12)
        return recv(descriptor, &reply, reply.count, 0) == 12 && String(decoding: reply, as: UTF8.self) == "HTTP/1.1 200"
    }

    /// Whether the peer closed `descriptor` within `seconds` (what it sent before is read and
    /// left aside: the rest of an answer).
    static func closedByPeer(_ descriptor: Int32, within seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let left = max(deadline.timeIntervalSinceNow, 0)
            guard poll(&entry, 1, Int32(left * 1000)) == 1 else { return false }
            if recv(descriptor, &buffer, buffer.count, 0) <= 0 { return true }
        }
    }

    /// A coordinator without workers and a `tactus web` in front of it with `arguments`; stopped
    /// by `stop()`.
    struct Gateway {
        let serve: ServeProcess
        let web: Process
        let base: String
        let port: Int

        init(_ directory: TemporaryDirectory, arguments: [String]) throws {
            serve = try ServeProcess(dataDirectory: directory.path + "/data", extraArguments: ["--no-local-workers"])
            let announce = directory.path + "/web.json"
            web = Process()
            web.executableURL = URL(fileURLWithPath: CLI.binary)
            web.arguments = [
                "web", "--server", serve.endpoints.frontend, "--events", serve.endpoints.events, "--listen", "127.0.0.1:0",
                "--announce-file", announce, "--log-level", "error",
            ] + arguments
            web.standardOutput = FileHandle.nullDevice
            web.standardError = FileHandle.nullDevice
            try web.run()
            let url = try? Wait.value("the gateway's address", timeout: .seconds(30)) {
                (try? Data(contentsOf: URL(fileURLWithPath: announce))).flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: String] }?["url"]
            }
            guard let url, let port = URL(string: url)?.port else {
                web.terminate()
                web.waitUntilExit()
                serve.stop()
                throw POSIXError(.ETIMEDOUT)
            }
            base = url
            self.port = port
        }

        func stop() {
            web.terminate()
            web.waitUntilExit()
            serve.stop()
        }
    }

    @Test func connectionsBeyondThePlacesAreClosedAsTheyOpen() throws {
        let directory = try TemporaryDirectory()
        let gateway = try Gateway(directory, arguments: ["--max-connections", "6", "--max-connections-per-address", "4"])
        defer { gateway.stop() }
        let base = gateway.base, port = gateway.port
        let deadline = Date().addingTimeInterval(30)

        // Each connection is admitted (its request answered) before the next opens: the gateway
        // sets up connections on several threads, so ones opened together race for the places.
        // Each holds an events stream, a request in progress, so none gives its place to a
        // newcomer however long the test takes.
        var open = [Int32]()
        defer { open.forEach { close($0) } }
        for source in ["127.0.0.1", "127.0.0.1", "127.0.0.1", "127.0.0.1"] {
            open.append(try Self.connect(from: source, to: port))
            #expect(Self.answered(open.last!, path: "/api/v1/events"))
        }
        let fifth = try Self.connect(from: "127.0.0.1", to: port)
        defer { close(fifth) }
        #expect(Self.closedByPeer(fifth, within: 10), "a fifth connection from one address is closed")
        for source in ["127.0.0.2", "127.0.0.2"] {
            open.append(try Self.connect(from: source, to: port))
            #expect(Self.answered(open.last!, path: "/api/v1/events"))
        }
        let seventh = try Self.connect(from: "127.0.0.3", to: port)
        defer { close(seventh) }
        #expect(Self.closedByPeer(seventh, within: 10), "a seventh connection in all is closed")
        #expect(!open.contains { Self.closedByPeer($0, within: 0.2) }, "the six admitted stay open")

        // Closed connections give their places back: a request from the first address is answered.
        open.forEach { close($0) }
        open = []
        var status = 0
        while status != 200 && Date() < deadline {
            status = HTTP(base: base).get("/api/v1/status").status
            if status != 200 { Thread.sleep(forTimeInterval: 0.05) }
        }
        #expect(status == 200)
    }

    /// When every place is taken by connections with no request in progress (sending their
    /// request heads slowly, or idle after an answer), a newcomer takes the place of the one
    /// that has been so longest (2 s at least), and is answered (attack round 7: 2,048
    /// connections sending their heads a byte every 5 s from four addresses locked every other
    /// client out).
    @Test func aNewcomerTakesThePlaceOfTheConnectionWithoutARequestLongest() throws {
        let directory = try TemporaryDirectory()
        let gateway = try Gateway(directory, arguments: ["--max-connections", "4", "--max-connections-per-address", "2"])
        defer { gateway.stop() }
        var open = [Int32]()
        defer { open.forEach { close($0) } }
        // A connection answered and then idle, then three that never finish their heads.
        open.append(try Self.connect(from: "127.0.0.1", to: gateway.port))
        #expect(Self.answered(open[0]))
        Thread.sleep(forTimeInterval: 0.1)
        let partial = Array("GET /api/v1/status HTTP/1.1\r\nHost: 127.0.0.1\r\n".utf8)
        for source in ["127.0.0.2", "127.0.0.2", "127.0.0.3"] {
            let slow = try Self.connect(from: source, to: gateway.port)
            open.append(slow)
            #expect(send(slow, partial, partial.count, 0) == partial.count)
            Thread.sleep(forTimeInterval: 0.1)  // their order of arrival is the order of eviction
        }
        // Full: a newcomer before the slow ones have waited 2 s is closed.
        let early = try Self.connect(from: "127.0.0.4", to: gateway.port)
        defer { close(early) }
        #expect(Self.closedByPeer(early, within: 10), "no place before the slow heads have waited 2 s")
        Thread.sleep(forTimeInterval: HTTPConnectionPlaces.evictableAfter.seconds + 0.2)
        let newcomer = try Self.connect(from: "127.0.0.4", to: gateway.port)
        defer { close(newcomer) }
        #expect(Self.answered(newcomer), "a newcomer is answered once the others have waited 2 s")
        #expect(Self.closedByPeer(open[0], within: 10), "the idle connection, without a request longest, gave its place")
        #expect(!Self.closedByPeer(open[1], within: 0.2), "a later slow connection keeps its place")
        // The next newcomer takes the place of the slow connection that waited longest.
        let second = try Self.connect(from: "127.0.0.5", to: gateway.port)
        defer { close(second) }
        #expect(Self.answered(second))
        #expect(Self.closedByPeer(open[1], within: 10), "the slow connection that waited longest gave its place")
        #expect(!Self.closedByPeer(open[3], within: 0.2), "the latest slow connection keeps its place")
    }
}
