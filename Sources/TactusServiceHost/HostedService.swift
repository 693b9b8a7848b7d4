import Foundation
import TactusLibraryService
import TactusModel
import TactusProtocol

/// The work a service host process does for the coordinator: everything that parses or computes
/// on what a client sent or names, so that a trap, an allocation failure or a hang there costs
/// one request, never the coordinator.
///
/// A call is a message of the channel (``ServiceChannel``) with the parts `[name, arguments]`
/// plus `payload` when the client's bytes travel with it, and the files it reads attached as
/// descriptors; the answer is `["ok", result]` or `["error", error body]` (JSON).
public enum HostedService: String, Sendable, Hashable, CaseIterable, Codable {
    /// A song's header (format, codec, signal shape, duration, tags) checked against the
    /// server's limits: ``ProbeArguments`` in, the song's record out. The song is the payload
    /// or the one descriptor.
    case probe
    /// An accelerometer recording's cadence: ``CadenceArguments`` in, the recording the payload
    /// or the one descriptor (an upload's file), a `CadenceReport` out.
    case cadence
    /// A song played at another tempo, written as WAV: ``RenderArguments`` in, the song the one
    /// descriptor, ``RenderedFile`` out.
    case render
    /// Songs played one after the other, each at its tempo, as one WAV file: ``WorkoutArguments``
    /// in, one descriptor per song, ``RenderedFile`` out.
    case workout
    /// A file's BPM tag: ``TagFileArguments`` in, the file's and its folder's descriptors, a
    /// ``TagCallAnswer`` of `TagFileRead` out.
    case tagsRead = "tags-read"
    /// A BPM tag written safely into a file: ``TagFileArguments`` with its order in, the file's and
    /// its folder's descriptors, a ``TagCallAnswer`` of `TagFileWritten` out.
    case tagsWrite = "tags-write"
    /// The SHA-256 of a file below a library root: ``IdentifyArguments`` in, the file the one
    /// descriptor, ``IdentifiedFile`` out.
    case identify
}

/// A ``HostedService/identify`` call.
public struct IdentifyArguments: Codable, Sendable, Hashable {
    /// The file's path, as messages name it.
    public var path: String

    public init(path: String) {
        self.path = path
    }
}

/// What an identify call found.
public struct IdentifiedFile: Codable, Sendable, Hashable {
    /// The SHA-256 of the file's bytes: the id of the song it holds.
    public var sha256: SongID

    public init(sha256: SongID) {
        self.sha256 = sha256
    }
}

/// A ``HostedService/probe`` call: the song's id and name, as the record will have them.
public struct ProbeArguments: Codable, Sendable, Hashable {
    /// The song's id, computed by the coordinator.
    public var song: SongID
    /// The name messages and the record give the song.
    public var name: String
    /// The song's size in bytes.
    public var size: Int
    /// How messages name the file, when not by ``name`` (a file below a library root: its path).
    public var path: String?

    public init(song: SongID, name: String, size: Int, path: String? = nil) {
        self.song = song
        self.name = name
        self.size = size
        self.path = path
    }
}

/// A ``HostedService/cadence`` call.
public struct CadenceArguments: Codable, Sendable, Hashable {
    /// The recording's name, as the report and its errors give it.
    public var name: String
    /// The recording's size in bytes, when it comes as a descriptor (none with a payload).
    public var size: Int?

    public init(name: String, size: Int? = nil) {
        self.name = name
        self.size = size
    }
}

/// A ``HostedService/render`` call.
public struct RenderArguments: Codable, Sendable, Hashable {
    public var name: String
    public var sourceBPM: Double
    public var targetBPM: Double
    /// Where the WAV file is written (a file of the coordinator's render directory).
    public var output: String

    public init(name: String, sourceBPM: Double, targetBPM: Double, output: String) {
        self.name = name
        self.sourceBPM = sourceBPM
        self.targetBPM = targetBPM
        self.output = output
    }

    enum CodingKeys: String, CodingKey {
        case name, output, sourceBPM = "source_bpm", targetBPM = "target_bpm"
    }
}

/// A ``HostedService/workout`` call: the songs in order, each read from the descriptor at its place.
public struct WorkoutArguments: Codable, Sendable, Hashable {
    public struct Song: Codable, Sendable, Hashable {
        public var name: String
        public var sourceBPM: Double
        public var targetBPM: Double

        public init(name: String, sourceBPM: Double, targetBPM: Double) {
            self.name = name
            self.sourceBPM = sourceBPM
            self.targetBPM = targetBPM
        }

        enum CodingKeys: String, CodingKey {
            case name, sourceBPM = "source_bpm", targetBPM = "target_bpm"
        }
    }

    public var songs: [Song]
    public var output: String

    public init(songs: [Song], output: String) {
        self.songs = songs
        self.output = output
    }
}

/// A ``HostedService/tagsRead`` or ``HostedService/tagsWrite`` call: the file's name in its
/// folder and in messages (the descriptors are the file's, then its folder's), and for a write
/// what to write.
public struct TagFileArguments: Codable, Sendable, Hashable {
    /// The file's name in its folder: one component.
    public var name: String
    /// How messages name the file.
    public var path: String
    /// The tag to write (``HostedService/tagsWrite``).
    public var order: TagWriteOrder?

    public init(name: String, path: String, order: TagWriteOrder? = nil) {
        self.name = name
        self.path = path
        self.order = order
    }
}

/// The answer of a tags call: what the file part found or wrote, or why the file was skipped or
/// failed (its own answer, not a failure of the call).
public struct TagCallAnswer<Value: Codable & Sendable>: Codable, Sendable {
    public var value: Value?
    public var problem: TagFileProblem?

    /// The answer of `body`: its value, or the problem it threw.
    public init(_ body: () throws(TagFileProblem) -> Value) {
        do {
            value = try body()
        } catch {
            problem = error
        }
    }

    /// The value, or the problem thrown.
    func result() throws(TagFileProblem) -> Value {
        if let value { return value }
        throw problem ?? TagFileProblem(skipped: false, reason: "the tags call answered neither a value nor a problem", code: .internal)
    }
}

/// What a render wrote.
public struct RenderedFile: Codable, Sendable, Hashable {
    public var durationS: Double

    public init(durationS: Double) {
        self.durationS = durationS
    }

    enum CodingKeys: String, CodingKey {
        case durationS = "duration_s"
    }
}

/// The JSON of the calls and answers.
enum ServiceJSON {
    static func encode<T: Encodable>(_ value: T) throws(ErrorBody) -> [UInt8] {
        do {
            return Array(try JSONEncoder().encode(value))
        } catch {
            throw ErrorBody(code: .internal, message: "cannot encode \(T.self): \(error)")
        }
    }

    /// Decodes `bytes` as `T`; `what` names them in the error.
    static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8], what: String) throws(ErrorBody) -> T {
        do {
            return try JSONDecoder().decode(T.self, from: Data(bytes))
        } catch {
            throw ErrorBody(code: .internal, message: "\(what) is not valid: \(error)")
        }
    }
}
