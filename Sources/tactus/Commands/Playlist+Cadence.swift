import ArgumentParser
import Foundation
import TactusCadence
import TactusModel
import TactusProtocol
import TactusStore

/// `tactus playlist`'s options that follow a recorded run and render the playlist.
struct CadenceFollowOptions: ParsableArguments {
    @Option(name: [.customLong("follow"), .customLong("cadence-from")], help: ArgumentHelp(
        "Follow this workout (GPX, TCX, FIT) or accelerometer recording (CSV), as tactus cadence reads them: each stretch "
            + "of steady cadence (or heart-rate zone, with --by heart-rate) is a segment.",
        valueName: "file"))
    var cadenceFrom: String?

    @Option(help: ArgumentHelp(
        "With --follow: what sets the tempo: cadence (the steps per minute) or heart-rate (the tempo of each heart-rate "
            + "zone, --zone-tempi).", valueName: "cadence|heart-rate"))
    var by: FollowedMeasure = .cadence

    @Option(name: .customLong("max-heart-rate"), help: ArgumentHelp(
        "With --by heart-rate: the runner's maximum heart rate, whose percentages bound the zones (default: the workout's "
            + "highest).", valueName: "bpm"))
    var maxHeartRate: Double?

    @Option(name: .customLong("zone-tempi"), help: ArgumentHelp(
        "With --by heart-rate: the tempo of each of the five zones (below 60 % of the maximum heart rate, 60-70, 70-80, "
            + "80-90, 90 and more), in beats per minute.", valueName: "bpm,bpm,bpm,bpm,bpm"))
    var zoneTempi = HeartRateZones.defaultTempi.map { String(Int($0)) }.joined(separator: ",")

    @Option(help: ArgumentHelp("Aim this many percent above the cadence, or every cadence of the profile (0 to 50).", valueName: "pct"))
    var sprint: Double?

    @Option(help: ArgumentHelp(
        "Render the playlist into this WAV file: each song stretched to its segment's tempo (Rubber Band, pitch kept).",
        valueName: "file"))
    var render: String?

    @Option(help: ArgumentHelp(
        "With --render or --m3u8: where the songs are (found by file name, checked by content); --render without it: the server renders.",
        valueName: "directory"))
    var music: String?

    @Option(name: .customLong("max-stretch"), help: ArgumentHelp(
        "With --render: the largest change of a song's tempo, in percent; songs are chosen within it (not --tolerance).",
        valueName: "pct"))
    var maxStretch = 8.0

    @Option(help: ArgumentHelp("With --render: seconds of crossfade between songs.", valueName: "seconds"))
    var crossfade = 2.0

    @Flag(name: .customLong("crossfade-by-time"), help: ArgumentHelp(
        "With --render: place each crossfade at the end of its song, not on beats (the file is then exactly as long as the "
            + "stretched songs minus the crossfades; on beats, up to a beat of each song at a join is left out)."))
    var crossfadeByTime = false

    /// The zones of --by heart-rate.
    var zones: HeartRateZones {
        get throws {
            let tempi = zoneTempi.split(separator: ",", omittingEmptySubsequences: false).map { Double($0.trimmingCharacters(in: .whitespaces)) }
            guard tempi.count == HeartRateZones.bounds.count + 1, tempi.allSatisfy({ $0.map { (20...400).contains($0) } ?? false })
            else { throw ValidationError("--zone-tempi must be five tempi in 20...400, separated by commas") }
            return HeartRateZones(tempi: tempi.compactMap { $0 }, maximumHeartRate: maxHeartRate)
        }
    }

    func validate() throws {
        if let maxHeartRate, !(60...250).contains(maxHeartRate) { throw ValidationError("--max-heart-rate must be 60 to 250 beats per minute") }
        if by == .heartRate, cadenceFrom == nil { throw ValidationError("--by heart-rate follows a workout: give --follow FILE") }
        _ = try zones
        if let sprint, !(0...50).contains(sprint) { throw ValidationError("--sprint must be a percentage in 0...50") }
        if !(maxStretch > 0 && maxStretch < 50) { throw ValidationError("--max-stretch must be a percentage in (0, 50)") }
        if !(0...10).contains(crossfade) { throw ValidationError("--crossfade must be 0 to 10 seconds") }
    }
}

/// What `--follow` follows.
enum FollowedMeasure: String, ExpressibleByArgument, CaseIterable {
    case cadence
    case heartRate = "heart-rate"
}

extension Tactus.Playlist {
    /// The playlist request of the options: a cadence or a profile, from a recording's steady
    /// stretches with --cadence-from, every cadence raised by --sprint.
    func query() throws -> PlaylistQuery {
        let factor = 1 + (following.sprint ?? 0) / 100
        // Rendering chooses songs it may stretch to the cadence.
        let tolerance = following.render == nil ? tolerance : following.maxStretch
        var segments: [CadenceProfile.Segment]
        if let cadenceFrom = following.cadenceFrom {
            segments = try Self.segments(from: cadenceFrom, zones: following.by == .heartRate ? following.zones : nil)
        } else if let profile, following.sprint != nil {
            do throws(StoreError) {
                segments = try CadenceProfile(parsing: profile).segments
            } catch {
                throw CommandFailure(error.description)
            }
        } else {
            // Nothing to change: the request as given.
            return PlaylistQuery(
                cadence: cadence.map { $0 * factor }, minutes: profile == nil ? minutes : nil, profile: profile,
                tolerance: tolerance / 100, detector: detector, strict: strictness)
        }
        segments = segments.map { CadenceProfile.Segment(cadence: $0.cadence * factor, durationS: $0.durationS) }
        let spec = segments.map { segment in
            "\(max(1, Int(segment.durationS.rounded())))s@" + String(format: "%.1f", segment.cadence)
        }.joined(separator: ",")
        return PlaylistQuery(profile: spec, tolerance: tolerance / 100, detector: detector, strict: strictness)
    }

    /// `strict` as the request carries it: a render stretches every song to its cadence, so it
    /// never takes songs beyond the stretch it allows.
    private var strictness: Bool? {
        strict || following.render != nil ? true : nil
    }

    /// The recording's stretches of steady cadence, as profile segments; the stretches are
    /// reported on standard error.
    /// With `zones`, the stretches of steady heart-rate zone, each at its zone's tempo.
    static func segments(from file: String, zones: HeartRateZones? = nil) throws -> [CadenceProfile.Segment] {
        let report: CadenceReport
        do throws(CadenceError) {
            let analysed = try CadenceAnalyzer().analyze(path: file)
            if let zones {
                guard let tempo = zones.tempoReport(analysed) else { throw CadenceError(file: file, .noHeartRate(format: analysed.format)) }
                report = tempo
            } else {
                report = analysed
            }
        } catch {
            throw CommandFailure(error.description)
        }
        if zones == nil, let reason = report.cadenceIsNotSteps {
            throw CommandFailure("\(file): \(reason); follow its heart rate instead (--by heart-rate)")
        }
        let stretches = report.steadyStretches()
        guard !stretches.isEmpty else { throw CommandFailure("\(file): no steps found: the recording has no cadence to follow") }
        let summary = stretches.map { "\(Output.clock($0.duration)) at " + String(format: "%.1f", $0.cadence) }
        printError((zones == nil ? "cadence" : "tempo by heart rate") + " of \(file): \(summary.joined(separator: ", "))")
        return stretches.map { CadenceProfile.Segment(cadence: $0.cadence, durationS: $0.duration) }
    }
}
