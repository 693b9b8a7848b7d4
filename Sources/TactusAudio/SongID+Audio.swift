import TactusModel

extension SongID {
    /// Hashes `source`: a file is streamed in 1 MiB pieces, never loaded whole.
    public init(of source: AudioSource) throws(AudioError) {
        switch source {
        case .bytes(let bytes, _):
            self.init(hashing: bytes)
        case .file, .descriptor:
            var hasher = Hasher()
            let reader = try ByteReader(source)
            var buffer = [UInt8](repeating: 0, count: 1 << 20)
            var offset: Int64 = 0
            while offset < reader.length {
                let got = buffer.withUnsafeMutableBytes { reader.read(at: offset, into: $0.baseAddress!, count: $0.count) }
                guard got > 0 else {
                    throw reader.readError
                        ?? .unreadable(file: reader.name, reason: "the file shrank while it was read (to \(offset) of \(reader.length) bytes)")
                }
                buffer.withUnsafeBytes { hasher.update(UnsafeRawBufferPointer(rebasing: $0[0..<got])) }
                offset += Int64(got)
            }
            self = hasher.finalize()
        }
    }
}
