import Foundation
import TactusLibraryRoots
import TactusLibraryService
import TactusModel
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

    /// A valid WAV followed by two million empty chunks: TagLib lists them all before it finds
    /// the tags (21 million held a tags host for its whole minute, at 2 GB).
    static func manyChunksWAV(at path: String, in directory: TemporaryDirectory) throws {
        let plain = directory.file("plain.wav")
        try AudioFileWriter(.wav16).write([Synth.clickTrack(bpm: 120, seconds: 2, sampleRate: 8_000)], sampleRate: 8_000, to: plain)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: plain)))
        let junk: [UInt8] = Array("junk".utf8) + [0, 0, 0, 0]
        for _ in 0..<2_000_000 { bytes += junk }
        let riffSize = UInt32(bytes.count - 8)
        for index in 0..<4 { bytes[4 + index] = UInt8(truncatingIfNeeded: riffSize >> (8 * UInt32(index))) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    @Test func aTagsReadThatRanPastItsTimeLimitIsNotTriedAgainWhileTheFileIsUnchanged() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-broken-files")
        let path = directory.file("chunks.wav")
        try Self.manyChunksWAV(at: path, in: directory)
        let tagger = IsolatedTagger(hosts: ServiceHostPoolTests.pool(limits: [.tagsRead: .milliseconds(300)]))
        func read() -> TagFileProblem? {
            do {
                let entry = try LibraryRoots.openEntry(atPath: path)
                defer { withExtendedLifetime(entry) {} }
                _ = try tagger.readTag(of: entry.descriptors)
                return nil
            } catch let error as TagFileProblem {
                return error
            } catch {
                Issue.record("\(error)")
                return nil
            }
        }
        let first = read()
        #expect(first?.code == .timeout, "\(String(describing: first))")
        let clock = ContinuousClock()
        var second: TagFileProblem?
        let elapsed = clock.measure { second = read() }
        #expect(second?.code == .timeout && second?.reason.contains("[not tried again") == true, "\(String(describing: second))")
        #expect(elapsed < .milliseconds(300), "answered without a host")
    }
}
