import Foundation
import TactusCadence
import TactusProtocol
import TactusStore

extension PlaylistCommand {
    /// The playlist request of the options: a cadence or a profile, from a recording's steady
    /// stretches with --cadence-from, every cadence raised by --sprint.
    func query() throws -> PlaylistQuery {
        let factor = 1 + (sprint ?? 0) / 100
        // Rendering chooses songs it may stretch to the cadence.
        let tolerance = render == nil ? tolerance : maxStretch
        var segments: [CadenceProfile.Segment]
        if let cadenceFrom {
            segments = try Self.segments(from: cadenceFrom)
        } else if let profile, sprint != nil {
            do throws(StoreError) {
                segments = try CadenceProfile(parsing: profile).segments
            } catch {
                throw CommandFailure(error.description)
            }
        } else {
            // Nothing to change: the request as given.
            return PlaylistQuery(
                cadence: cadence.map { $0 * factor }, minutes: profile == nil ? minutes : nil, profile: profile,
                tolerance: tolerance / 100, detector: detector)
        }
        segments = segments.map { CadenceProfile.Segment(cadence: $0.cadence * factor, durationS: $0.durationS) }
        let spec = segments.map { segment in
            "\(max(1, Int(segment.durationS.rounded())))s@" + String(format: "%.1f", segment.cadence)
        }.joined(separator: ",")
        return PlaylistQuery(profile: spec, tolerance: tolerance / 100, detector: detector)
    }

    /// The recording's stretches of steady cadence, as profile segments; the stretches are
    /// reported on standard error.
    static func segments(from file: String) throws -> [CadenceProfile.Segment] {
        let report: CadenceReport
        do throws(CadenceError) {
            report = try CadenceAnalyzer().analyze(path: file)
        } catch {
            throw CommandFailure(error.description)
        }
        let stretches = report.steadyStretches()
        guard !stretches.isEmpty else { throw CommandFailure("\(file): no steps found: the recording has no cadence to follow") }
        let summary = stretches.map { "\(Output.clock($0.duration)) at " + String(format: "%.1f", $0.cadence) }
        FileHandle.standardError.write(Data("cadence of \(file): \(summary.joined(separator: ", "))\n".utf8))
        return stretches.map { CadenceProfile.Segment(cadence: $0.cadence, durationS: $0.duration) }
    }
}
