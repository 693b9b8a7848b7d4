import Foundation
import TactusLibraryRoots
import TactusTags
import TactusTestSupport
import Testing

/// A file whose container lists more chunks than any song has is not given to TagLib, which
/// lists them all before it finds the tags (21 million empty chunks after a valid WAV held a
/// tags host for a minute at 2 GB: attack round 5, M5). A song with a few chunks more than
/// usual is read as before.
@Suite struct ContainerChunksTests {
    func read(_ path: String) throws -> FileTags {
        let entry = try LibraryRoots.openEntry(atPath: path)
        defer { withExtendedLifetime(entry) {} }
        return try TagFile.read(entry.descriptors)
    }

    /// A WAV of 2 s with `chunks` empty `junk` chunks after its own (the RIFF size counts them).
    func wav(_ path: String, chunks: Int, in directory: TemporaryDirectory) throws {
        let plain = directory.file("plain-\(chunks).wav")
        try AudioFileWriter(.wav16).write([Synth.clickTrack(bpm: 120, seconds: 2, sampleRate: 8_000)], sampleRate: 8_000, to: plain)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: plain)))
        for _ in 0..<chunks { bytes += Array("junk".utf8) + [0, 0, 0, 0] }
        let riffSize = UInt32(bytes.count - 8)
        for index in 0..<4 { bytes[4 + index] = UInt8(truncatingIfNeeded: riffSize >> (8 * UInt32(index))) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    @Test func aWAVOfThousandsOfChunksIsRefusedBeforeTagLib() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-chunks")
        let many = directory.file("many.wav"), few = directory.file("few.wav")
        try wav(many, chunks: 5_000, in: directory)
        try wav(few, chunks: 100, in: directory)
        let error = #expect(throws: TagError.self) { try read(many) }
        #expect(error?.code == .unreadable && error?.description.contains("more than 4096 chunks") == true, "\(String(describing: error))")
        #expect(try read(few).format == .other, "a WAV holds no BPM tag, but it is read")
    }

    @Test func anMP4OfThousandsOfAtomsIsRefusedBeforeTagLib() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-chunks")
        let path = directory.file("atoms.m4a")
        var bytes: [UInt8] = [0, 0, 0, 16] + Array("ftypM4A ".utf8) + [0, 0, 0, 0]
        for _ in 0..<5_000 { bytes += [0, 0, 0, 8] + Array("free".utf8) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let error = #expect(throws: TagError.self) { try read(path) }
        #expect(error?.description.contains("more than 4096 chunks") == true, "\(String(describing: error))")
    }
}
