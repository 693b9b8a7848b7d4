import Foundation

/// Tags read and written by mutagen (`python3-mutagen`, installed by `make deps`), through
/// ``CLI/python(_:environment:timeout:)``: a reader independent of TagLib for the tests of
/// Tactus's tags.
public enum Mutagen {
    /// Why mutagen could not answer.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Whether `python3` can import mutagen.
    public static let isAvailable: Bool = (try? CLI.python(["-c", "import mutagen"]).status) == 0

    private static let reader = """
        import json, sys, mutagen
        f = mutagen.File(sys.argv[1])
        tags = {}
        if f is not None and f.tags is not None:
            for key, value in f.tags.items():
                text = getattr(value, "text", value)
                tags[str(key).upper()] = [str(v) for v in (text if isinstance(text, list) else [text])]
        print(json.dumps(tags))
        """

    private static let bpmWriter = """
        import sys, mutagen
        from mutagen.id3 import ID3, TBPM
        path, bpm = sys.argv[1], sys.argv[2]
        if path.endswith(".mp3"):
            tags = ID3(path)
            tags.add(TBPM(encoding=0, text=[bpm]))
            tags.save(path)
        else:
            f = mutagen.File(path)
            f["BPM"] = [bpm]
            f.save()
        """

    /// Every tag of the file: keys in upper case (ID3 frame ids such as `TBPM` and `TXXX:BPM`,
    /// Vorbis comment names such as `BPM`, MP4 atoms such as `TMPO`), values as text.
    public static func tags(of path: String) throws -> [String: [String]] {
        let run = try CLI.python(["-c", reader, path])
        guard run.status == 0,
            let tags = try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: [String]]
        else { throw Failure(description: "mutagen could not read \(path): \(run.standardError)") }
        return tags
    }

    /// Sets the file's BPM tag to `text` with mutagen: `TBPM` in an MP3's ID3v2 tag (which
    /// must exist), the `BPM` Vorbis comment otherwise.
    public static func setBPM(_ text: String, in path: String) throws {
        let run = try CLI.python(["-c", bpmWriter, path, text])
        guard run.status == 0 else { throw Failure(description: "mutagen could not tag \(path): \(run.standardError)") }
    }
}
