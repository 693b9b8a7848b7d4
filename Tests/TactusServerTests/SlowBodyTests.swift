import Foundation
import TactusProtocol
import TactusTestSupport
import TactusZMQ
import Testing

/// Requests whose bodies are slow to read (a megabyte of JSON the coordinator must parse, most of
/// it a field it ignores), sent many at once by one client: another client's query is still
/// answered within half a second, on a machine whose cores are busy.
@Suite struct SlowBodyTests {
    @Test func aFloodOfMegabyteBodiesDoesNotHoldAnotherClientsQueryBack() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-slow-bodies")
        let server = try ServeProcess(dataDirectory: directory.path, extraArguments: ["--no-local-workers"])
        defer { server.stop() }
        let flooder = try ServerClient(server.endpoints)
        // {"min_bpm":60,"max_bpm":200,"ignored":[0,0,...]}: just under the 1 MiB a frame may hold.
        let zeros = [UInt8](repeating: UInt8(ascii: "0"), count: 500_000)
        let body = Array(#"{"min_bpm":60,"max_bpm":200,"ignored":["#.utf8) + Array(zeros.map { [$0] }.joined(separator: [UInt8(ascii: ",")]))
            + Array("]}".utf8)
        let hog = try CPUHog(processes: 2 * ProcessInfo.processInfo.activeProcessorCount)
        defer { hog.stop() }
        let watch = ServerWatch(server: server)
        watch.start()
        for index in 0..<48 {
            try flooder.socket.send([[], Array("TACTUS1".utf8), Array("query".utf8), Array("flood-\(index)".utf8), body])
        }
        var answered = 0
        while answered < 48, try flooder.socket.receive(timeout: .seconds(60)) != nil { answered += 1 }
        let figures = watch.stop()
        #expect(answered == 48)
        #expect(figures.queries > 3)
        #expect(figures.slowestQuery < .milliseconds(500), "a query took \(figures.slowestQuery)")
    }
}
