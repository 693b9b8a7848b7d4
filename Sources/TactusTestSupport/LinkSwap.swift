import Foundation
import TactusModel

/// A folder (a library root) holding one song, and outside it a private copy of the song's bytes
/// (mode 0600): where the song's name swapped for a symbolic link leads. The copy has the same
/// bytes, so no check of content stands in the way of writing through the link, only the care
/// taken with the name (issue 27's race on tag writing).
///
/// ```swift
/// let swap = try LinkSwap()
/// let entry = try LibraryRoots.openEntry(atPath: swap.song)
/// try swap.swapForLink()
/// // ... write the tag through `entry` ...
/// #expect(try swap.outsideIsUntouched())
/// ```
public struct LinkSwap {
    public let directory: TemporaryDirectory
    /// The folder and the song in it.
    public let root: String
    public let song: String
    /// Where ``swapForLink()`` moves the song, in the same folder.
    public let moved: String
    /// The private copy, outside the folder.
    public let outside: String
    /// The song's bytes, and the copy's.
    public let bytes: Data

    /// `name` in the folder: 6 s of drums as FLAC, with a title and an artist.
    public init(name: String = "song.flac") throws {
        directory = try TemporaryDirectory(prefix: "tactus-link-swap")
        root = directory.file("root")
        let elsewhere = directory.file("elsewhere")
        for folder in [root, elsewhere] { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
        song = root + "/" + name
        moved = root + "/moved-" + name
        outside = elsewhere + "/private-" + name
        try AudioFileWriter(.flac, tags: AudioTags(title: "Mine", artist: "Me"))
            .write([Synth.drumPattern(bpm: 120, seconds: 6, sampleRate: 22_050)], sampleRate: 22_050, to: song)
        bytes = try Data(contentsOf: URL(fileURLWithPath: song))
        try bytes.write(to: URL(fileURLWithPath: outside))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: outside)
    }

    /// Moves the song aside (to ``moved``) and puts a symbolic link to the private copy in its place.
    public func swapForLink() throws {
        try FileManager.default.moveItem(atPath: song, toPath: moved)
        try FileManager.default.createSymbolicLink(atPath: song, withDestinationPath: outside)
    }

    /// Whether the private copy still has its bytes and its mode 0600.
    public func outsideIsUntouched() throws -> Bool {
        let mode = try FileManager.default.attributesOfItem(atPath: outside)[.posixPermissions] as? Int
        return try Data(contentsOf: URL(fileURLWithPath: outside)) == bytes && mode == 0o600
    }

    /// The names in the folder, sorted.
    public func namesInRoot() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: root).sorted()
    }
}
