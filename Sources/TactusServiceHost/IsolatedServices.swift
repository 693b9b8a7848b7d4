import Foundation
import TactusCoordinator
import TactusLibraryRoots
import TactusLibraryService
import TactusModel
import TactusProtocol
import TactusStore

/// The coordinator's ``SongProbe`` whose every header is read in a service host process: the
/// song's bytes travel in the call, or its file's open descriptor (a file below a library root,
/// an upload's file), never a path the host would open again.
public struct IsolatedProbe: SongProbe {
    public let hosts: ServiceHostPool

    public init(hosts: ServiceHostPool) {
        self.hosts = hosts
    }

    public func record(of bytes: [UInt8], name: String, id: SongID) throws(ErrorBody) -> SongRecord {
        try call(ProbeArguments(song: id, name: name, size: bytes.count), payload: bytes, descriptors: [])
    }

    public func record(of file: LibraryFile, name: String, id: SongID) throws(ErrorBody) -> SongRecord {
        try call(ProbeArguments(song: id, name: name, size: file.size, path: file.path), payload: nil, descriptors: [file.descriptor])
    }

    public func record(ofFileAt path: String, size: Int, name: String, id: SongID) throws(ErrorBody) -> SongRecord {
        let file = try OpenFile(path, what: "\(name): the uploaded song's file")
        defer { withExtendedLifetime(file) {} }
        return try call(ProbeArguments(song: id, name: name, size: size), payload: nil, descriptors: [file.descriptor])
    }

    public func songID(of file: LibraryFile) throws(ErrorBody) -> SongID {
        let answer = try hosts.call(.identify, arguments: IdentifyArguments(path: file.path), descriptors: [file.descriptor], what: file.path)
        return try ServiceJSON.decode(IdentifiedFile.self, from: answer.result, what: "\(file.path): the identify answer").sha256
    }

    /// The host's record, checked to be the record of the song asked about.
    private func call(_ arguments: ProbeArguments, payload: [UInt8]?, descriptors: [Int32]) throws(ErrorBody) -> SongRecord {
        let answer = try hosts.call(.probe, arguments: arguments, payload: payload, descriptors: descriptors, what: arguments.name)
        let record = try ServiceJSON.decode(SongRecord.self, from: answer.result, what: "\(arguments.name): the probe's record")
        guard record.id == arguments.song, record.fileName == arguments.name, record.byteSize == arguments.size else {
            throw ErrorBody(code: .internal, message: "\(arguments.name): the probe answered with the record of another song")
        }
        return record
    }
}

/// The coordinator's ``RecordingAnalyzer`` whose every recording is read in a service host process.
public struct IsolatedRecordingAnalyzer: RecordingAnalyzer {
    public let hosts: ServiceHostPool

    public init(hosts: ServiceHostPool) {
        self.hosts = hosts
    }

    public func cadence(of recording: [UInt8], name: String) throws(ErrorBody) -> CadenceReport {
        try call(CadenceArguments(name: name), payload: recording, descriptors: [])
    }

    public func cadence(ofFileAt path: String, size: Int, name: String) throws(ErrorBody) -> CadenceReport {
        let file = try OpenFile(path, what: "\(name): the uploaded recording's file")
        defer { withExtendedLifetime(file) {} }
        return try call(CadenceArguments(name: name, size: size), payload: nil, descriptors: [file.descriptor])
    }

    private func call(_ arguments: CadenceArguments, payload: [UInt8]?, descriptors: [Int32]) throws(ErrorBody) -> CadenceReport {
        let what = "cadence of \(arguments.name)"
        let answer = try hosts.call(.cadence, arguments: arguments, payload: payload, descriptors: descriptors, what: what)
        return try ServiceJSON.decode(CadenceReport.self, from: answer.result, what: "\(what): the report")
    }
}

/// The coordinator's ``SongRenderer`` whose every render runs in a service host process, reading
/// the songs through descriptors the coordinator opened.
public struct IsolatedRenderer: SongRenderer {
    public let hosts: ServiceHostPool

    public init(hosts: ServiceHostPool) {
        self.hosts = hosts
    }

    public func render(songAt path: String, name: String, sourceBPM: Double, targetBPM: Double, to output: String) throws(ErrorBody)
        -> Double
    {
        let file = try OpenFile(path, what: "\(name): the song's file")
        defer { withExtendedLifetime(file) {} }
        let answer = try hosts.call(
            .render, arguments: RenderArguments(name: name, sourceBPM: sourceBPM, targetBPM: targetBPM, output: output),
            descriptors: [file.descriptor], what: "render of \(name)")
        return try ServiceJSON.decode(RenderedFile.self, from: answer.result, what: "render of \(name): the answer").durationS
    }

    public func renderWorkout(_ songs: [WorkoutSong], to output: String) throws(ErrorBody) -> Double {
        guard songs.count <= ServiceChannel.maxDescriptors else {
            throw ErrorBody(code: .tooLarge, message: "a workout renders at most \(ServiceChannel.maxDescriptors) songs, not \(songs.count)")
        }
        var files: [OpenFile] = []
        for song in songs { files.append(try OpenFile(song.path, what: "\(song.name): the song's file")) }
        defer { withExtendedLifetime(files) {} }
        let arguments = WorkoutArguments(
            songs: songs.map { WorkoutArguments.Song(name: $0.name, sourceBPM: $0.sourceBPM, targetBPM: $0.targetBPM) }, output: output)
        let answer = try hosts.call(.workout, arguments: arguments, descriptors: files.map(\.descriptor), what: "render of a workout")
        return try ServiceJSON.decode(RenderedFile.self, from: answer.result, what: "render of a workout: the answer").durationS
    }
}

/// The coordinator's ``SongTagger`` whose every tag is read and written in a service host
/// process, through the file's and its folder's descriptors the coordinator opened below a
/// library root (never a path the host would open again). A host that fails makes its file
/// `failed` with the pool's code (`worker-lost`, `timeout`, `unavailable`).
public struct IsolatedTagger: SongTagger {
    public let hosts: ServiceHostPool

    public init(hosts: ServiceHostPool) {
        self.hosts = hosts
    }

    public func readTag(of file: OpenFileInFolder) throws(TagFileProblem) -> TagFileRead {
        try call(.tagsRead, TagFileArguments(name: file.name, path: file.path), file, what: "tags of \(file.path)")
    }

    public func writeTag(_ order: TagWriteOrder, into file: OpenFileInFolder) throws(TagFileProblem) -> TagFileWritten {
        try call(.tagsWrite, TagFileArguments(name: file.name, path: file.path, order: order), file, what: "tags of \(file.path)")
    }

    private func call<Value: Codable & Sendable>(
        _ service: HostedService, _ arguments: TagFileArguments, _ file: OpenFileInFolder, what: String
    ) throws(TagFileProblem) -> Value {
        let answer: TagCallAnswer<Value>
        do throws(ErrorBody) {
            let result = try hosts.call(service, arguments: arguments, descriptors: [file.file, file.folder], what: what).result
            answer = try ServiceJSON.decode(TagCallAnswer<Value>.self, from: result, what: "\(what): the answer")
        } catch {
            throw TagFileProblem(skipped: false, reason: error.message, code: error.code)
        }
        return try answer.result()
    }
}

/// A file of the coordinator's own (an upload's file, a blob, a descriptor it holds under
/// `/proc/self/fd`) opened for reading, closed with this value.
final class OpenFile: Sendable {
    let descriptor: Int32

    init(_ path: String, what: String) throws(ErrorBody) {
        descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw ErrorBody(code: .internal, message: "\(what) cannot be opened: \(String(cString: strerror(errno)))")
        }
    }

    deinit {
        close(descriptor)
    }
}
