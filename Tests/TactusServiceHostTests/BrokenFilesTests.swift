import Foundation
import TactusLibraryRoots
import TactusLibraryService
import TactusModel
import TactusProtocol
import TactusServiceHost
import TactusTestSupport
import Testing

/// A file that crashes its service host fails again at once while it does not change, without
/// a host: many connections repeating a call on a file that crashes TagLib made every other
/// client's calls wait behind the restarts (attack round 5, M3).
@Suite struct BrokenFilesTests {
    /// An MP3 that crashes TagLib (``NestedChapters``).
    static func crashingMP3(at path: String, in directory: TemporaryDirectory) throws {
        let plain = directory.file("plain.mp3")
        try AudioFileWriter(.mp3(.constant)).write([Synth.clickTrack(bpm: 120, seconds: 4, sampleRate: 44_100)], sampleRate: 44_100, to: plain)
        let audio = [UInt8](try Data(contentsOf: URL(fileURLWithPath: plain)))
        try Data(NestedChapters.mp3(from: audio)).write(to: URL(fileURLWithPath: path))
    }

    @Test func aFileThatCrashedItsHostFailsAtOnceUntilItChanges() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-broken-files")
        let path = directory.file("chapters.mp3")
        try Self.crashingMP3(at: path, in: directory)
        let tagger = IsolatedTagger(hosts: ServiceHostPoolTests.pool())
        func read() -> (problem: TagFileProblem?, seconds: Double) {
            let clock = ContinuousClock()
            var problem: TagFileProblem?
            let elapsed = clock.measure {
                do {
                    let entry = try LibraryRoots.openEntry(atPath: path)
                    defer { withExtendedLifetime(entry) {} }
                    _ = try tagger.readTag(of: entry.descriptors)
                } catch let error as TagFileProblem {
                    problem = error
                } catch {
                    Issue.record("\(error)")
                }
            }
            return (problem, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18)
        }
        let first = read()
        #expect(first.problem?.code == .workerLost && first.problem?.reason.contains("SIGSEGV") == true, "\(String(describing: first.problem))")
        #expect(tagger.hosts.idleProcessIDs.isEmpty, "the crashed host is gone")
        // Asked again, unchanged: the same error at once, and no host is started for it.
        let second = read()
        #expect(second.problem?.code == .workerLost)
        #expect(second.problem?.reason.contains("[not tried again: this file broke a tags-read host") == true, "\(String(describing: second.problem))")
        #expect(tagger.hosts.idleProcessIDs.isEmpty && tagger.hosts.busyProcessIDs.isEmpty, "no host was started")
        #expect(second.seconds < first.seconds)
        // Changed (its time), it is tried again: a host crashes again.
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -60)], ofItemAtPath: path)
        let third = read()
        #expect(third.problem?.code == .workerLost && third.problem?.reason.contains("not tried again") == false, "\(String(describing: third.problem))")
    }

    /// A call that reads a little of a file (its tags, its header, its hash) and runs past its
    /// time limit is remembered like a crash: a WAV of 21 million empty chunks held the tags
    /// host for its whole minute, again at every call. Here the hash of a 512 MiB file (sparse,
    /// read at memory speed) against a limit of 20 ms.
    @Test func aCallThatRanPastItsTimeLimitIsNotTriedAgainWhileTheFileIsUnchanged() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-broken-files")
        let path = directory.file("large.wav")
        try #require(FileManager.default.createFile(atPath: path, contents: nil))
        try #require(truncate(path, 512 << 20) == 0)
        let probe = IsolatedProbe(hosts: ServiceHostPoolTests.pool(limits: [.identify: .milliseconds(20)]))
        func identify() -> ErrorBody? {
            do {
                let file = try LibraryRoots([directory.path]).open(path)
                _ = try probe.songID(of: file)
                return nil
            } catch let error as ErrorBody {
                return error
            } catch {
                Issue.record("\(error)")
                return nil
            }
        }
        let first = identify()
        #expect(first?.code == .timeout, "\(String(describing: first))")
        // Answered from the pool's memory, without a host (only that answer says so).
        let second = identify()
        #expect(second?.code == .timeout && second?.message.contains("[not tried again") == true, "\(String(describing: second))")
    }
}
