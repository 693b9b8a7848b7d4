import ArgumentParser
import Foundation
import TactusAudio
import TactusAudioProbe
import TactusCadence
import TactusCoordinator
import TactusLibraryRoots
import TactusLibraryService
import TactusModel
import TactusProtocol
import TactusServiceHost
import TactusStore
import TactusTags
import TactusWorker

extension Tactus {
    /// `tactus service-host`: the process in which `tactus serve`'s coordinator has what clients
    /// send or name parsed and computed on (song headers, files' SHA-256, cadence recordings,
    /// renders, tags), so that a trap,
    /// an allocation failure or a hang costs one request, never the server. Not for users.
    struct ServiceHost: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "service-host",
            abstract: "Serve the coordinator's calls on standard input (started by tactus serve).",
            shouldDisplay: false)

        @Option(help: ArgumentHelp(
            "Memory this process may take for a call, in MiB, beyond its own size once ready (0: none).", valueName: "MiB"))
        var maxMemoryMb = 0

        @Option(name: .customLong("max-duration-s"), help: ArgumentHelp(
            "The longest song accepted, in seconds (too-long above it).", valueName: "seconds"))
        var maxDurationS = 7200.0

        @Option(help: ArgumentHelp("Lower this process's CPU priority by this nice value (0 to 19).", valueName: "n"))
        var nice: Int32 = 0

        @Option(help: ArgumentHelp("The largest call accepted, in bytes.", valueName: "bytes"))
        var maxCallBytes = 80 << 20

        func run() throws {
            if maxMemoryMb > 0 {
                try ResourceLimits.useOneMallocArena()
            }
            if nice > 0 { try ResourceLimits.lowerPriority(niceness: nice) }
            if maxMemoryMb > 0 {
                try ResourceLimits.limitMemory(toCurrentSizePlus: maxMemoryMb)
            }
            let server = ServiceHostServer(handlers: HostedHandlers(decoding: DecodingOptions(maximumSeconds: maxDurationS)).all)
            server.serve(on: ServiceChannel(descriptor: 0), maxCallBytes: maxCallBytes)
        }
    }
}

/// What a service host does for each ``HostedService``: the in-process code `tactus analyze`,
/// `tactus cadence`, `tactus stretch` and `tactus tags --db` use, behind the call's arguments.
struct HostedHandlers: Sendable {
    let decoding: DecodingOptions

    var all: [HostedService: ServiceHostServer.Handler] {
        [
            .probe: { input throws(ErrorBody) in try ServiceCallInput.answer(try probe(input)) },
            .cadence: { input throws(ErrorBody) in try ServiceCallInput.answer(try cadence(input)) },
            .render: { input throws(ErrorBody) in try ServiceCallInput.answer(try render(input)) },
            .workout: { input throws(ErrorBody) in try ServiceCallInput.answer(try workout(input)) },
            .identify: { input throws(ErrorBody) in try ServiceCallInput.answer(try identify(input)) },
            .tagsRead: { input throws(ErrorBody) in try ServiceCallInput.answer(try tagsRead(input)) },
            .tagsWrite: { input throws(ErrorBody) in try ServiceCallInput.answer(try tagsWrite(input)) },
        ]
    }

    private func identify(_ input: ServiceCallInput) throws(ErrorBody) -> IdentifiedFile {
        let path = try input.decode(IdentifyArguments.self).path
        let file = try input.requireDescriptors(1)[0]
        do throws(AudioError) {
            return IdentifiedFile(sha256: try SongID(of: .descriptor(file, name: path)))
        } catch {
            throw ErrorBody(error)
        }
    }

    private func probe(_ input: ServiceCallInput) throws(ErrorBody) -> SongRecord {
        let arguments = try input.decode(ProbeArguments.self)
        let probe = AudioProbe(decoding: decoding)
        if let payload = input.payload {
            return try probe.record(of: payload, name: arguments.name, id: arguments.song)
        }
        let file = try input.requireDescriptors(1)[0]
        var record = try probe.record(ofDescriptor: file, size: arguments.size, name: arguments.path ?? arguments.name, id: arguments.song)
        record.fileName = arguments.name
        return record
    }

    private func cadence(_ input: ServiceCallInput) throws(ErrorBody) -> CadenceReport {
        let arguments = try input.decode(CadenceArguments.self)
        let name = arguments.name
        let recording: [UInt8]
        if let payload = input.payload {
            recording = payload
        } else {
            recording = try Self.contents(of: try input.requireDescriptors(1)[0], size: arguments.size ?? 0, name: name)
        }
        do throws(CadenceError) {
            return try CadenceAnalyzer().analyze(recording, file: name)
        } catch {
            throw ErrorBody(code: .badRecording, message: error.description)
        }
    }

    /// The `size` bytes of the open file `descriptor` (an uploaded recording), read whole: a
    /// file of another size is refused before anything is read.
    private static func contents(of descriptor: Int32, size: Int, name: String) throws(ErrorBody) -> [UInt8] {
        var status = stat()
        guard fstat(descriptor, &status) == 0, Int(status.st_size) == size, size <= RecordingReader.maximumFileBytes else {
            throw ErrorBody(code: .internal, message: "\(name): the uploaded recording's file is not the \(size) bytes announced")
        }
        var bytes = [UInt8](repeating: 0, count: size)
        var done = 0
        while done < size {
            let got = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress! + done, size - done, off_t(done)) }
            if got < 0 {
                if errno == EINTR { continue }
                throw ErrorBody(code: .internal, message: "\(name): the uploaded recording's file cannot be read: \(String(cString: strerror(errno)))")
            }
            guard got > 0 else { throw ErrorBody(code: .internal, message: "\(name): the uploaded recording's file ends at byte \(done) of \(size)") }
            done += got
        }
        return bytes
    }

    private func render(_ input: ServiceCallInput) throws(ErrorBody) -> RenderedFile {
        let arguments = try input.decode(RenderArguments.self)
        let file = try input.requireDescriptors(1)[0]
        let seconds = try StretchRenderer().render(
            songAt: "/proc/self/fd/\(file)", name: arguments.name, sourceBPM: arguments.sourceBPM, targetBPM: arguments.targetBPM,
            to: arguments.output)
        return RenderedFile(durationS: seconds)
    }

    private func workout(_ input: ServiceCallInput) throws(ErrorBody) -> RenderedFile {
        let arguments = try input.decode(WorkoutArguments.self)
        let files = try input.requireDescriptors(arguments.songs.count)
        let songs = zip(arguments.songs, files).map { song, file in
            WorkoutSong(path: "/proc/self/fd/\(file)", name: song.name, sourceBPM: song.sourceBPM, targetBPM: song.targetBPM)
        }
        return RenderedFile(durationS: try StretchRenderer().renderWorkout(songs, to: arguments.output))
    }

    private func tagsRead(_ input: ServiceCallInput) throws(ErrorBody) -> TagCallAnswer<TagFileRead> {
        let (_, file) = try tagFile(input)
        return TagCallAnswer { () throws(TagFileProblem) in try LocalSongTagger().readTag(of: file) }
    }

    private func tagsWrite(_ input: ServiceCallInput) throws(ErrorBody) -> TagCallAnswer<TagFileWritten> {
        let (arguments, file) = try tagFile(input)
        guard let order = arguments.order else { throw ErrorBody(code: .internal, message: "\(arguments.path): a tags-write call carries no order") }
        return TagCallAnswer { () throws(TagFileProblem) in try LocalSongTagger().writeTag(order, into: file) }
    }

    /// A tags call's file: its descriptors (the file's, then its folder's) and its names.
    private func tagFile(_ input: ServiceCallInput) throws(ErrorBody) -> (TagFileArguments, OpenFileInFolder) {
        let arguments = try input.decode(TagFileArguments.self)
        let descriptors = try input.requireDescriptors(2)
        guard !arguments.name.isEmpty, !arguments.name.contains("/"), arguments.name != ".", arguments.name != ".." else {
            throw ErrorBody(code: .internal, message: "\(arguments.path): a tags call names no file of its folder")
        }
        return (arguments, OpenFileInFolder(file: descriptors[0], folder: descriptors[1], name: arguments.name, path: arguments.path))
    }
}
