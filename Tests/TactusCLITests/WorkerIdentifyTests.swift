import Foundation
import TactusProtocol
import TactusTestSupport
import Testing

/// `tactus worker --library-root DIR` answers IDENTIFY: the SHA-256, size and modification
/// time of files below its roots, opened as a JOB's location is.
@Suite struct WorkerIdentifyTests {
    /// The SHA-256 of `path` as coreutils' `sha256sum` computes it (an independent reader).
    private func sha256sum(_ path: String) throws -> String {
        let result = try CLI.runProgram("/usr/bin/sha256sum", [path])
        return String(result.standardOutput.prefix(64))
    }

    @Test func aWorkerSharingARootHashesTheFilesItIsAskedAboutAndRefusesTheOthers() throws {
        let music = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: music.file("Album"), withIntermediateDirectories: false)
        let song = music.file("Album/song.wav")
        try Data(try drumWAV(bpm: 120, seconds: 6)).write(to: URL(fileURLWithPath: song))
        try FileManager.default.createSymbolicLink(atPath: music.file("link.wav"), withDestinationPath: song)
        let root = (music.path as NSString).resolvingSymlinksInPath

        let coordinator = try FakeCoordinator()
        let worker = try WorkerProcess(
            connect: coordinator.endpoint, arguments: ["--detector", "autocorrelation", "--library-root", music.path] + WorkerSongJobTests.fastHeartbeats)
        let received = try #require(try coordinator.receiveSkippingHeartbeats(), "no READY; worker log:\n\(worker.log)")
        guard case .offer(let offer) = received.message else {
            Issue.record("expected a version-2 READY, got \(received.message)")
            return
        }
        #expect(offer.identifies == true && offer.roots == [root])

        let files = [
            JobLocation(root: root, path: "Album/song.wav"), JobLocation(root: root, path: "link.wav"),
            JobLocation(root: root, path: "Album/gone.wav"), JobLocation(root: "/etc", path: "passwd"),
        ]
        try coordinator.send(.identify(IdentifyBody(request: 9, files: files)), to: received.worker)
        let answer = try #require(try coordinator.receiveSkippingHeartbeats(), "no IDENTIFIED; worker log:\n\(worker.log)")
        guard case .identified(let identified) = answer.message else {
            Issue.record("expected IDENTIFIED, got \(answer.message)")
            return
        }
        #expect(identified.request == 9 && identified.files.count == 4)
        let attributes = try FileManager.default.attributesOfItem(atPath: song)
        #expect(identified.files[0].sha256?.hex == (try sha256sum(song)))
        #expect(identified.files[0].size == (attributes[.size] as? NSNumber)?.int64Value)
        let modified = try #require(attributes[.modificationDate] as? Date)
        #expect(abs(Double(identified.files[0].mtimeNs ?? 0) / 1e9 - modified.timeIntervalSince1970) < 0.001)
        #expect(identified.files[1].error?.code == .forbidden, "a symbolic link below the root is not followed")
        #expect(identified.files[2].error?.code == .notFound)
        #expect(identified.files[3].error?.code == .forbidden, "a root the worker did not declare")
        #expect(identified.files.dropFirst().allSatisfy { $0.sha256 == nil })
    }

    /// A file too large to hash within the worker's second (a sparse 8 GiB file) is answered
    /// `unavailable`, and so is every file after it: the worker answers, and keeps
    /// heartbeating, within about a second rather than the 4 s the hashing would take.
    @Test func aWorkerStopsHashingWhenItsTimeForTheRequestIsOver() throws {
        let music = try TemporaryDirectory()
        try Data(try drumWAV(bpm: 120, seconds: 6)).write(to: URL(fileURLWithPath: music.file("small.wav")))
        let large = FileHandle(forWritingAtPath: music.file("large.wav")) ?? {
            FileManager.default.createFile(atPath: music.file("large.wav"), contents: nil)
            return FileHandle(forWritingAtPath: music.file("large.wav"))!
        }()
        try large.truncate(atOffset: 8 << 30)
        try large.close()
        let root = (music.path as NSString).resolvingSymlinksInPath
        let coordinator = try FakeCoordinator()
        let worker = try WorkerProcess(
            connect: coordinator.endpoint, arguments: ["--library-root", music.path] + WorkerSongJobTests.fastHeartbeats)
        let received = try #require(try coordinator.receiveSkippingHeartbeats(), "no READY; worker log:\n\(worker.log)")
        let files = ["small.wav", "large.wav", "small.wav"].map { JobLocation(root: root, path: $0) }
        let asked = ContinuousClock.now
        try coordinator.send(.identify(IdentifyBody(request: 2, files: files)), to: received.worker)
        let answer = try #require(try coordinator.receiveSkippingHeartbeats(), "no IDENTIFIED; worker log:\n\(worker.log)")
        #expect(ContinuousClock.now - asked < .seconds(3))
        guard case .identified(let identified) = answer.message else {
            Issue.record("expected IDENTIFIED, got \(answer.message)")
            return
        }
        #expect(identified.files[0].sha256 != nil)
        #expect(identified.files.dropFirst().map(\.error?.code) == [.unavailable, .unavailable])
    }
}
