import Foundation
import TactusAudio
import TactusCoordinator
import TactusDetector
import TactusLibraryRoots
import TactusModel
import TactusProtocol
import TactusStore

/// The coordinator's ``SongProbe`` built on TactusAudio: a submitted song's header is read
/// (format, codec, signal shape, duration, tags) and checked against ``decoding``'s limits;
/// a song that does not decode is refused with the audio error's code.
public struct AudioProbe: SongProbe {
    /// How submitted audio is checked before it is accepted (`--max-duration-s`).
    public let decoding: DecodingOptions

    /// A probe checking songs against `decoding`'s limits.
    public init(decoding: DecodingOptions = .standard) {
        self.decoding = decoding
    }

    /// The song's record from its header; a song that does not decode is refused with the
    /// audio error's code and message.
    public func record(of bytes: [UInt8], name: String, id: SongID) throws(ErrorBody) -> SongRecord {
        try record(from: .bytes(bytes, name: name), fileName: name, byteSize: bytes.count, id: id)
    }

    /// The record of an upload's finished file from its header, read through a descriptor
    /// (never loaded whole); messages name it `name`, as its client does.
    public func record(ofFileAt path: String, size: Int, name: String, id: SongID) throws(ErrorBody) -> SongRecord {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw ErrorBody(code: .internal, message: "\(name): cannot open the uploaded song's file: \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        return try record(ofDescriptor: descriptor, size: size, name: name, id: id)
    }

    /// The record of the song in the open file `descriptor`, `size` bytes, from its header (read
    /// through the descriptor, never loaded whole); messages name it `name`.
    public func record(ofDescriptor descriptor: Int32, size: Int, name: String, id: SongID) throws(ErrorBody) -> SongRecord {
        try record(from: .descriptor(descriptor, name: name), fileName: name, byteSize: size, id: id)
    }

    /// The record of a file below a library root from its header, read through its open
    /// descriptor (never loaded whole, never opened again by name).
    public func record(of file: LibraryFile, name: String, id: SongID) throws(ErrorBody) -> SongRecord {
        try record(from: .descriptor(file.descriptor, name: file.path), fileName: name, byteSize: file.size, id: id)
    }

    /// The record of the song `source` from its header, checked against ``decoding``'s limits.
    private func record(from source: AudioSource, fileName: String, byteSize: Int, id: SongID) throws(ErrorBody) -> SongRecord {
        do {
            let metadata = try AudioStream(source, options: decoding).metadata
            return SongRecord(id: id, fileName: fileName, byteSize: byteSize, metadata: metadata)
        } catch {
            throw ErrorBody(error)
        }
    }
}

extension SongRecord {
    /// The record of a song from what the decoder found out about it.
    public init(
        id: SongID, fileName: String, byteSize: Int, metadata: AudioMetadata, addedAt: Date = Date(),
        envelope: EnergyEnvelope? = nil, beatGrid: BeatGrid? = nil
    ) {
        self.init(
            id: id, fileName: fileName, byteSize: byteSize, format: metadata.format.rawValue, codec: metadata.codec,
            sampleRate: metadata.sampleRate, channels: metadata.channels, durationS: metadata.duration,
            tags: metadata.tags, addedAt: addedAt, envelope: envelope, beatGrid: beatGrid)
    }
}
