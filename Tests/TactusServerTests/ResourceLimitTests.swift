import Foundation
import TactusAnalysis
import TactusProtocol
import TactusTestSupport
import Testing

/// The local workers' resource limits, for real: a `tactus serve` whose workers run under a
/// small memory limit or a short analysis time limit, and songs that exceed them. Each costs
/// exactly its own job, with a message that names the song and the limit; the coordinator and
/// the other songs carry on.
@Suite(.serialized) struct ResourceLimitTests {
    /// A song for the comb filter only, so that one worker meets it.
    private func submit(_ bytes: [UInt8], name: String, to client: ServerClient) throws -> SubmitResponse {
        // Over 16 MiB, as an upload in chunks.
        try submitted(try client.submit(bytes, name: name, detectors: ["comb-filter"]))
    }

    @Test func aSongOverTheWorkerMemoryLimitFailsItsJobAndTheOthersGoOn() throws {
        let directory = try TemporaryDirectory()
        // The limit is an allowance for jobs beyond the worker's own size. Songs are decoded in
        // blocks; with --no-shared-blobs the bytes travel in the JOB (as to a worker on another
        // host), so what a job needs grows with its song's bytes: the JOB message and the
        // bytes received from it. 96 MB of audio cannot be received within 128 MiB; 12 s of it
        // easily can.
        let server = try ServeProcess(
            dataDirectory: directory.path, extraArguments: ["--max-worker-memory-mb", "128", "--no-shared-blobs"])
        let client = try ServerClient(server.endpoints)
        let huge = try Self.hugeSong()
        let big = try submit(huge, name: "huge.wav", to: client)
        let small = try submit(
            try AudioFileWriter(.wav16).encode([Synth.clickTrack(bpm: 120, seconds: 12, sampleRate: 22050)], sampleRate: 22050),
            name: "small.wav", to: client)

        let finished = try client.waitForSongs([big.song, small.song], timeout: .seconds(120))
        #expect(finished == [big.song, small.song])
        let failed = try #require(try client.jobs(of: big.song).first)
        #expect(failed.state == .failed)
        #expect(failed.attempt == 3)
        let error = try #require(failed.error)
        #expect(error.code == .workerLost)
        for part in ["huge.wav", "killed by signal", "128 MiB memory limit", "attempt 3 of 3"] {
            #expect(error.message.contains(part), "\(error.message)")
        }
        #expect(try client.jobs(of: small.song).map(\.state) == [.done])

        // The coordinator is alive and `tactus serve` started its worker (every detector) again.
        #expect(try client.waitForWorkers(1) == 1)
        #expect(server.stop() == 0)
    }

    /// 96 MB of WAV (544 s of silence in doubles).
    private static func hugeSong() throws -> [UInt8] {
        let huge = try AudioFileWriter(.wavDouble).encode([Synth.silence(seconds: 544, sampleRate: 22050)], sampleRate: 22050)
        #expect(huge.count > 95_000_000)
        return huge
    }

    /// By default a local worker opens an upload in the blob directory itself and decodes it
    /// in blocks: the same 96 MB song is analysed within the same 128 MiB.
    @Test func aSongOfAnySizeIsAnalysedWithinTheMemoryLimitWhenTheWorkerOpensItsBlob() throws {
        let directory = try TemporaryDirectory()
        let server = try ServeProcess(dataDirectory: directory.path, extraArguments: ["--max-worker-memory-mb", "128"])
        let client = try ServerClient(server.endpoints)
        let big = try submit(try Self.hugeSong(), name: "huge.wav", to: client)
        #expect(try client.waitForSongs([big.song], timeout: .seconds(120)) == [big.song])
        let jobs = try client.jobs(of: big.song)
        #expect(jobs.map(\.state) == [.done], "\(jobs.map { $0.error?.message ?? "" })")
        #expect(jobs.map(\.attempt) == [1])
        #expect(server.stop() == 0)
    }

    @Test func anAnalysisOverTheTimeLimitFailsTimeoutOnceAndTheWorkerStays() throws {
        let directory = try TemporaryDirectory()
        let server = try ServeProcess(dataDirectory: directory.path, extraArguments: ["--max-analysis-seconds", "0.5"])
        let client = try ServerClient(server.endpoints)
        #expect(try client.waitForWorkers(1) == 1)
        let workersBefore = Set(server.workerProcessIDs)
        // Half an hour of clicks: a debug build analyses it in tens of seconds, far past 0.5 s.
        let long = try AudioFileWriter(.flac).encode(
            [Synth.clickTrack(bpm: 126, seconds: 1800, sampleRate: 22050)], sampleRate: 22050)
        let song = try submit(long, name: "endless.flac", to: client)

        let finished = try client.waitForSongs([song.song], timeout: .seconds(60))
        #expect(finished == [song.song])
        let failed = try #require(try client.jobs(of: song.song).first)
        #expect(failed.state == .failed)
        #expect(failed.attempt == 1, "a time limit is final: the same song would take as long again")
        let error = try #require(failed.error)
        #expect(error.code == .timeout)
        for part in ["endless.flac", "time limit of 0.5 s"] {
            #expect(error.message.contains(part), "\(error.message)")
        }
        // The worker stopped the analysis itself: no process ended, none was started.
        #expect(Set(server.workerProcessIDs) == workersBefore)
        #expect(try client.serverStatus().workers.count == 1)
        #expect(server.stop() == 0)
    }
}
