#if canImport(Glibc)
import Glibc
#endif

/// The top-level chunks of a RIFF (WAV), IFF (AIFF) or MP4 file, counted before TagLib sees the
/// file: TagLib lists them all before it looks for the tags, an entry each, so a valid WAV
/// followed by 21 million empty chunks held a tags host for a minute at 2 GB (and an MP4 of
/// empty atoms took 6 GB). A song has a handful of them; a file with more than ``limit`` is
/// not given to TagLib.
enum ContainerChunks {
    /// The most top-level chunks a file may have.
    static let limit = 4096

    /// Whether the open file `descriptor` is a RIFF, IFF or MP4 file with more than ``limit``
    /// top-level chunks (other files, and those that end early, are not counted).
    static func exceedsLimit(_ descriptor: Int32) -> Bool {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return false }
        let size = Int64(status.st_size)
        guard let head = read(descriptor, at: 0, count: 12) else { return false }
        let id = String(decoding: head[0..<4], as: UTF8.self)
        switch id {
        case "RIFF", "RIFX", "RF64", "FORM":
            let bigEndian = id == "RIFX" || id == "FORM"
            return count(descriptor, from: 12, size: size) { header in
                (4 + 4, Int64(integer(header[4..<8], bigEndian: bigEndian)), true)
            }
        default:
            guard String(decoding: head[4..<8], as: UTF8.self) == "ftyp" else { return false }
            return count(descriptor, from: 0, size: size) { header in
                // An atom's size counts its header; 1: a 64-bit size follows; 0: to the end.
                let short = Int64(integer(header[0..<4], bigEndian: true))
                if short == 1 { return (16, -1, false) }
                return (8, short == 0 ? -2 : short - 8, false)
            }
        }
    }

    /// Walks chunks from `offset`: `layout` gives a header's length, its body's length (-1: a
    /// 64-bit size after the first 8 bytes; -2: to the end) and whether bodies are padded to
    /// an even length. True once more than ``limit`` have been counted.
    private static func count(
        _ descriptor: Int32, from start: Int64, size: Int64, layout: ([UInt8]) -> (header: Int, body: Int64, padded: Bool)
    ) -> Bool {
        var offset = start, chunks = 0
        while offset + 8 <= size {
            guard let header = read(descriptor, at: offset, count: 16) ?? read(descriptor, at: offset, count: 8) else { return false }
            var (headerLength, body, padded) = layout(header)
            if body == -1 {
                guard header.count >= 16 else { return false }
                body = Int64(clamping: integer(header[8..<16], bigEndian: true)) - 16
            } else if body == -2 {
                body = size - offset - Int64(headerLength)
            }
            guard body >= 0 else { return false }
            chunks += 1
            if chunks > limit { return true }
            offset += Int64(headerLength) + body + (padded ? body & 1 : 0)
        }
        return false
    }

    private static func read(_ descriptor: Int32, at offset: Int64, count: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        let got = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, count, off_t(offset)) }
        return got == count ? bytes : nil
    }

    private static func integer(_ bytes: ArraySlice<UInt8>, bigEndian: Bool) -> UInt64 {
        let ordered = bigEndian ? Array(bytes) : bytes.reversed()
        return ordered.reduce(0) { $0 << 8 | UInt64($1) }
    }
}
