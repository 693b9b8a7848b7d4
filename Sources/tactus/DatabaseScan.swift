import Foundation
import TactusAnalysis
import TactusAudio
import TactusAudioProbe
import TactusDetector
import TactusLibraryRoots
import TactusLibraryService
import TactusModel
import TactusProtocol
import TactusStore

/// `tactus scan --db`: library roots compared with a library file in this process, exactly as a
/// server's scan compares them (``LibraryScan``: unchanged files not read, the others hashed;
/// new, changed, moved, copied, missing, skipped with reasons), except that the songs still
/// to analyse are decoded and analysed here, one at a time, by the chosen detectors, instead
/// of queued for workers.
///
/// A song's analyses are stored before its location, so a scan stopped half-way leaves no file
/// recorded as seen whose analyses are not stored: the next scan looks at it again. A song
/// that cannot be decoded has its failure stored (as a server stores a failed job's) and is
/// not tried again until its file changes.
struct DatabaseScan {
    let library: Library
    let roots: LibraryRoots
    /// The detectors a song must have an analysis of (with their parameters).
    let detectors: [any TempoDetector]
    /// Files larger than this are skipped `too-large` before they are read.
    let maxSongBytes: Int
    let probe = AudioProbe()

    /// Scans `paths` (files or folders below the roots; every root when empty), calling
    /// `progress` after each file; returns the summary.
    func run(paths: [String], progress: (ScanSummary) -> Void) throws -> ScanSummary {
        let started = ContinuousClock.now
        let scan = LibraryScan(library: library, roots: roots) { [library, detectors, maxSongBytes, probe] file, name, _ in
            let (record, known) = try library.identify(file, limit: maxSongBytes) { song in
                try probe.record(of: file, name: name, id: song)
            }
            var requests = [JobRequest]()
            for detector in detectors {
                let descriptor = detector.descriptor
                let stored = try library.analysis(
                    of: record.id, detector: descriptor.name, version: descriptor.version, params: detector.parameters)
                if stored == nil { requests.append(JobRequest(detector: descriptor.name, params: detector.parameters)) }
            }
            return LibraryScan.Preparation(song: record, location: file.location, songWasKnown: known, requests: requests)
        }
        let plan = try scan.plan(paths: paths)
        var tally = ScanTally(plan)
        // Files are looked at 32 at a time (the refusals among them recorded in one transaction),
        // then their songs analysed one at a time.
        var looked: [LibraryScan.Outcome] = []
        for (index, found) in plan.files.enumerated() {
            if index % 32 == 0 {
                let batch = Array(plan.files[index..<min(index + 32, plan.files.count)])
                looked = scan.look(at: batch, identities: Array(repeating: nil, count: batch.count))
            }
            let outcome = looked[index % 32]
            if case .queue(let prepared, _, _) = outcome {
                do {
                    let failure = try analyse(prepared, found: found)
                    tally.queued(prepared.requests.count)
                    tally.count(outcome)
                    if let failure { tally.failed(found, failure) }
                } catch {
                    tally.skip(found, error)
                }
            } else {
                tally.count(outcome)
            }
            progress(tally.progress(looked: index + 1, seconds: (ContinuousClock.now - started).seconds))
        }
        let (moved, missing) = try scan.finish(plan.unseen)
        return tally.finished(moved: moved, missing: missing, seconds: (ContinuousClock.now - started).seconds)
    }

    /// Decodes the file once and runs the detectors `prepared` still needs, then stores the
    /// analyses (or their failure) and, after them, the song's location. Returns the failure
    /// when the song could not be analysed; throws when nothing was stored (the file changed
    /// since it was hashed, or the library refused the write).
    private func analyse(_ prepared: LibraryScan.Preparation, found: LibraryScan.Found) throws -> ErrorBody? {
        let names = Set(prepared.requests.map(\.detector))
        let analyzer = SongAnalyzer(detectors: detectors.filter { names.contains($0.descriptor.name) })
        let file = try roots.open(root: found.root, relative: found.entry.relative, named: found.absolutePath)
        let result = analyzer.analyze(.descriptor(file.descriptor, name: found.absolutePath))
        if let hash = result.song, hash != prepared.song.id {
            throw ErrorBody(code: .songChanged, message: "\(found.absolutePath): the file changed while it was scanned; scan again")
        }
        var song = prepared.song
        let records: [AnalysisRecord]
        var failure: ErrorBody?
        if let problem = result.error {
            let failed = AnalysisFailure(code: problem.code, message: problem.message)
            failure = ErrorBody(failed)
            records = prepared.requests.compactMap { request in
                analyzer.detectors.first { $0.descriptor.name == request.detector }.map {
                    AnalysisRecord.failed(detector: request.detector, version: $0.descriptor.version, params: request.params, failure: failed)
                }
            }
        } else {
            if let metadata = result.metadata { song.durationS = metadata.duration }
            song.envelope = result.envelope
            song.beatGrid = result.beatGrid
            records = result.analyses.map { AnalysisRecord($0) }
        }
        try library.record(song, analyses: records)
        try library.recordLocation(prepared.location, of: song.id)
        return failure
    }
}
