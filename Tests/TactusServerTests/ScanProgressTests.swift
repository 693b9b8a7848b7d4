import Foundation
import TactusProtocol
import TactusTestSupport
import Testing

/// `scan.progress` events of a server's scan: counts so far, and the files skipped in their own
/// batch only, so that a scan of many unreadable files does not send a growing list each time.
@Suite struct ScanProgressTests {
    @Test func progressEventsListEachSkippedFileOnceAndCountThemAll() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-scan-progress")
        let music = directory.file("music")
        try FileManager.default.createDirectory(atPath: music, withIntermediateDirectories: true)
        for index in 0..<200 { #expect(FileManager.default.createFile(atPath: music + "/empty-\(index).flac", contents: Data())) }
        let server = try ServeProcess(dataDirectory: directory.file("data"), extraArguments: ["--library-root", music])
        let client = try ServerClient(server.endpoints)
        // The subscription reaches the publisher before the scan begins.
        _ = try client.serverStatus()
        Thread.sleep(forTimeInterval: 0.3)
        guard let summary = try client.request(.scan(ScanRequest()), timeout: .seconds(120)).answer(ScanCommand.self) else {
            Issue.record("the scan was not answered")
            return
        }
        #expect(summary.skipped.count == 200 && summary.skippedCount == nil)
        var listed: [String] = []
        var counts: [Int] = []
        while let frames = try client.events.receive(timeout: .milliseconds(500)) {
            guard case .scanProgress(let progress) = try Event(frames: frames) else { continue }
            #expect(progress.skipped.count <= 32, "an event lists more than its batch")
            listed += progress.skipped.map(\.path)
            counts.append(progress.skippedCount ?? -1)
        }
        #expect(counts.count >= 6 && counts == counts.sorted() && counts.last == 200, "\(counts)")
        #expect(listed.count == 200 && Set(listed) == Set(summary.skipped.map(\.path)))
    }
}
