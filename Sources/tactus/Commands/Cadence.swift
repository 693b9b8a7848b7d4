import ArgumentParser
import Foundation
import TactusCadence
import TactusClient
import TactusModel
import TactusPlot

extension Tactus {
    /// `tactus cadence FILE...`: the cadence (steps per minute) of accelerometer recordings.
    struct Cadence: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "cadence",
            abstract: "Find the cadence (steps per minute) of phone accelerometer recordings (CSV) and watches' workouts (GPX, TCX, FIT).",
            discussion: """
                Reads CSV recordings of a phone's accelerometer: `t,x,y,z` (seconds; with or without a \
                header), and the exports of Sensor Logger (`time,seconds_elapsed,z,y,x`), phyphox \
                ("Time (s)","Acceleration x (m/s^2)"..., also with semicolons and decimal commas) and \
                Physics Toolbox (`time,gFx,gFy,gFz,TgF`, time in seconds or as a clock time). Units are \
                m/s^2 or g, from the header or from gravity in the data; 25-500 Hz, irregular sampling \
                allowed. The cadence is measured in windows of 10 s every 2 s (each with a confidence, \
                0-1; `still` where the person stands still, `irregular` where the movement has no step \
                period) and overall (the mean of the windows with steps), from 90 to 210 steps/min.

                Also reads watches' workouts, recognised by their content: GPX with Garmin's \
                TrackPointExtension (gpxtpx:cad, gpxtpx:hr), TCX (Cadence, the RunCadence extension, \
                HeartRateBpm, DistanceMeters, Speed) and FIT activity files (record messages: cadence, \
                fractional cadence, heart rate, distance, speed). Watches store running cadence per foot \
                (strides per minute): the report is in steps per minute and cadence_held says which \
                the file held. The same windows, with each window's heart rate and pace. The sport \
                the file names is reported; a cycling (or rowing, swimming...) workout's cadence counts \
                no steps: it is reported as held, in held_cadence (cadence_held revolutions-per-minute, \
                strokes-per-minute or other-per-minute), never as steps.

                Examples:
                  tactus cadence run.csv
                  tactus cadence TotalAcceleration.csv --windows
                  tactus cadence run.csv --json --plot run.svg
                  tactus cadence run.csv --server tcp://10.0.0.2:5555

                With --server, the recording's bytes are sent to that server (its `cadence` \
                request; recordings up to 64 MiB) and the server analyses it; the output is the same.

                With --json, one JSON object per file and per line: file, format, unit, unit_evidence \
                (header, gravity or assumed), includes_gravity, samples, duration_s, sample_rate_hz, \
                cadence_spm (null when no window has steps), step_s (seconds with steps) and windows \
                [{start_s, end_s, status, cadence_spm, confidence, movement_g}]; or file and error \
                {code, message}. A workout's report has no unit, unit_evidence, includes_gravity and \
                movement_g, but sport (where the file names one), cadence_held (steps-per-minute or \
                strides-per-minute; another sport's unit, with held_cadence), heart_rate_bpm and \
                pace_s_per_km (overall and per window, where the file records them). --plot draws the cadence over time (FILE.svg or FILE.png; one \
                recording).

                Exit status: 0 when every recording was analysed, 1 when any failed, 2 on usage errors.
                """)

        @Argument(help: ArgumentHelp("The recordings (CSV) or workouts (GPX, TCX, FIT).", valueName: "file"))
        var files: [String]

        @Flag(help: "Print one JSON object per recording and per line (JSON Lines).")
        var json = false

        @Flag(help: "List every window in the table.")
        var windows = false

        @Option(help: ArgumentHelp("Draw the cadence over time into this image (.svg or .png).", valueName: "file"))
        var plot: String?

        @OptionGroup var connection: ServerOptions

        func validate() throws {
            guard !files.isEmpty else { throw ValidationError("Give at least one recording.") }
            if let plot {
                guard files.count == 1 else { throw ValidationError("--plot draws one recording; give one file.") }
                do throws(PlotError) { _ = try ImageFile(path: plot) } catch { throw ValidationError(error.description) }
            }
        }

        func run() throws {
            let client = try connection.server.map { _ in try connection.client() }
            var failures = 0
            for file in files {
                let report: CadenceReport
                do throws(FileFailure) {
                    report = try analyze(file, client: client)
                } catch {
                    failures += 1
                    if json {
                        try Output.jsonLine(error)
                    } else {
                        printError("Error: \(error.error.message)")
                    }
                    continue
                }
                if json { try Output.jsonLine(report) } else { print(lines: CadenceText.table(report, windows: windows)) }
                if let plot { try CadenceText.draw(report, to: plot) }
            }
            if failures > 0 { throw ExitCode.failure }
        }
    }
}

extension Tactus.Cadence {
    /// The report of `file`, analysed here or, with a `client`, by its server.
    private func analyze(_ file: String, client: TactusClient?) throws(FileFailure) -> CadenceReport {
        guard let client else {
            do throws(CadenceError) {
                return try CadenceAnalyzer().analyze(path: file)
            } catch {
                throw FileFailure(file: file, code: error.code, message: error.description)
            }
        }
        guard let bytes = FileManager.default.contents(atPath: file) else {
            let reason = FileManager.default.fileExists(atPath: file) ? "cannot read the file" : "no such file"
            let error = CadenceError(file: file, .notARecording(reason))
            throw FileFailure(file: file, code: error.code, message: error.description)
        }
        do throws(ClientError) {
            return try client.cadence(of: [UInt8](bytes), name: file)
        } catch {
            throw FileFailure(file: file, error)
        }
    }
}

/// How `cadence` prints and draws a report.
enum CadenceText {
    static func table(_ report: CadenceReport, windows listed: Bool) -> [String] {
        var lines = [report.file]
        let about: String
        if let unit = report.unit, let evidence = report.unitEvidence, let gravity = report.includesGravity {
            about = "\(unit.rawValue) (\(evidence.rawValue)), " + (gravity ? "with gravity" : "without gravity")
        } else {
            about = (report.sport.map { "\($0), " } ?? "") + "cadence held in " + (report.cadenceHeld?.rawValue ?? "steps-per-minute")
                + (report.heartRate.map { String(format: ", heart rate %.0f bpm", $0) } ?? "")
                + (report.pace.map { ", pace " + Self.pace($0) } ?? "")
        }
        lines.append(String(format: "  %@, %.1f Hz, %@, %d samples, ", report.format.rawValue, report.sampleRate,
            ServerText.duration(report.duration), report.samples) + about)
        let cadence = report.cadenceIsNotSteps.map { reason in
            "none in steps: " + reason + (report.heldCadence.map { String(format: "; %.1f per minute while moving", $0) } ?? "")
        } ?? (report.cadence.map { String(format: "%.1f steps/min", $0) } ?? "none: no window with steps")
            + " over \(ServerText.duration(report.stepSeconds)) of steps"
        lines.append("  cadence " + cadence + "; \(report.windows.count) windows: "
            + "\(report.count(.steps)) with steps, \(report.count(.still)) still, \(report.count(.irregular)) without steps")
        if report.cadence != nil { lines.append("  over time  " + sparkline(report.windows.map(\.cadence))) }
        if listed {
            let workout = report.format.isWorkout
            let rows = report.windows.map { window in
                [String(format: "%.0f-%.0f s", window.start, window.end), window.status.rawValue,
                 (window.cadence ?? window.heldCadence).map { String(format: "%.1f", $0) } ?? "-", String(format: "%.2f", window.confidence)]
                    + (workout ? [window.heartRate.map { String(format: "%.0f", $0) } ?? "-", window.pace.map(Self.pace) ?? "-"] : [])
            }
            var widths = [6, 9, 5, 4, 3, 4]
            for row in rows { for (column, cell) in row.enumerated() { widths[column] = max(widths[column], cell.count) } }
            let cadenceHeading = report.cadenceIsNotSteps == nil ? "spm" : "per min"
            for row in [["window", "status", cadenceHeading, "conf"] + (workout ? ["hr", "pace"] : [])] + rows {
                lines.append("  " + row.enumerated().map { column, cell in
                    column == row.count - 1 ? cell : cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
                }.joined(separator: "  "))
            }
        }
        return lines
    }

    /// A pace in seconds per kilometre as minutes and seconds: `5:12/km`.
    static func pace(_ secondsPerKilometre: Double) -> String {
        let seconds = Int(secondsPerKilometre.rounded())
        return String(format: "%d:%02d/km", seconds / 60, seconds % 60)
    }

    /// The windows' cadences as a terminal sparkline (blank where a window has none), at most 100 wide.
    static func sparkline(_ cadences: [Double?]) -> String {
        let step = max(1, (cadences.count + 99) / 100)
        return Sparkline.line(stride(from: 0, to: cadences.count, by: step).map { cadences[$0] })
    }

    static func draw(_ report: CadenceReport, to path: String) throws {
        let windows = report.windows.map { window in
            CadenceFigure.Window(start: window.start, end: window.end, kind: {
                switch window.status {
                case .steps: .steps(cadence: window.cadence ?? 0, confidence: window.confidence)
                case .still: .still
                case .irregular: .irregular
                }
            }())
        }
        let figure = CadenceFigure(
            title: "Cadence of \((report.file as NSString).lastPathComponent)", windows: windows, duration: report.duration,
            overall: report.cadence)
        do throws(PlotError) {
            try ImageFile(path: path).write(figure.document())
        } catch {
            throw CommandFailure(error.description)
        }
    }
}
