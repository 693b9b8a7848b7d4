import Foundation
import TactusModel

/// Reads accelerometer recordings exported as CSV by phone logger apps (see ``RecordingFormat``).
///
/// The header decides the format, the columns and, when it says, the unit; a file without a
/// header is read as `t,x,y,z` in seconds. Comma, semicolon and tab separators are recognised
/// from the header line; with a semicolon or a tab, decimal commas are accepted. Every data line
/// is checked: all fields present, finite numbers, time strictly increasing. The sampling rate
/// (from the median interval) must be within ``acceptedRates``.
public enum RecordingReader {
    /// Median sampling rates accepted, in Hz: phones record at 25-500 Hz; a little margin each side.
    public static let acceptedRates: ClosedRange<Double> = 20...600
    /// The fewest samples accepted, whatever their span.
    public static let minimumSamples = 64
    /// The longest header line accepted, in bytes: loggers write a few dozen names.
    public static let maximumHeaderBytes = 4096
    /// The longest span accepted, in seconds: a day.
    public static let maximumSeconds = 86_400.0
    /// The most samples the span may hold at the recording's median rate (what its resampled
    /// signal takes): a day at 100 Hz.
    public static let maximumGridSamples = 8_640_000.0
    /// The largest file ``read(path:)`` reads, in bytes (a day at 100 Hz in a verbose format).
    public static let maximumFileBytes = 512 << 20

    /// The recording in `bytes`, read from `file` (used in errors).
    public static func read(_ bytes: [UInt8], file: String) throws(CadenceError) -> AccelerometerRecording {
        if bytes.contains(0) { throw CadenceError(file: file, .notARecording("binary data (a NUL byte)")) }
        var buffer = bytes
        buffer.append(0)
        return try buffer.withUnsafeMutableBufferPointer { (text) throws(CadenceError) -> AccelerometerRecording in
            var parser = Parser(text: text, file: file)
            return try parser.parse()
        }
    }

    /// The recording in the file at `path`, at most ``maximumFileBytes``.
    public static func read(path: String) throws(CadenceError) -> AccelerometerRecording {
        try read(contents(path: path), file: path)
    }

    /// The bytes of the file at `path`, a recording or a workout of at most ``maximumFileBytes``.
    public static func contents(path: String) throws(CadenceError) -> [UInt8] {
        if let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int, size > maximumFileBytes {
            throw CadenceError(file: path, .tooLarge(bytes: size, limit: maximumFileBytes))
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            let reason = FileManager.default.fileExists(atPath: path) ? "cannot read the file" : "no such file"
            throw CadenceError(file: path, .notARecording(reason))
        }
        return [UInt8](data)
    }
}

/// Which columns hold what, as the header says.
struct ColumnLayout {
    var format: RecordingFormat
    var names: [String]
    var time: Int
    /// Seconds per unit of the time column (1, 1e-3, 1e-9).
    var timeScale: Double
    var axes: (x: Int, y: Int, z: Int)
    var unit: AccelerationUnit?

    /// The layout a header line describes, or nil when it names no time column and three axes.
    static func recognise(_ header: [String]) -> ColumnLayout? {
        let names = header.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        func column(_ name: String) -> Int? { names.firstIndex(of: name) }
        if let elapsed = column("seconds_elapsed"), let x = column("x"), let y = column("y"), let z = column("z") {
            return ColumnLayout(format: .sensorLogger, names: names, time: elapsed, timeScale: 1, axes: (x, y, z), unit: nil)
        }
        if let gx = column("gfx"), let gy = column("gfy"), let gz = column("gfz"), let time = column("time") {
            return ColumnLayout(format: .physicsToolbox, names: names, time: time, timeScale: 1, axes: (gx, gy, gz),
                unit: .standardGravity)
        }
        if let ax = column("ax"), let ay = column("ay"), let az = column("az"), column("at") != nil, let time = column("time") {
            return ColumnLayout(format: .physicsToolbox, names: names, time: time, timeScale: 1, axes: (ax, ay, az),
                unit: .metresPerSecondSquared)
        }
        if let time = names.firstIndex(where: { $0.hasPrefix("time (s)") }),
            let x = names.firstIndex(where: { $0.contains("acceleration x") }),
            let y = names.firstIndex(where: { $0.contains("acceleration y") }),
            let z = names.firstIndex(where: { $0.contains("acceleration z") })
        {
            return ColumnLayout(format: .phyphox, names: names, time: time, timeScale: 1, axes: (x, y, z), unit: unit(names[x]))
        }
        // Plain: a time column and three axis columns, by their letters (`t`, `time_ms`, `ax`, `acc_x (g)`).
        var time: (index: Int, scale: Double)?
        var axes: [Character: Int] = [:]
        for (index, name) in names.enumerated() {
            let bare = name.split(separator: "(").first.map(String.init) ?? name
            let letters = bare.filter { $0.isLetter }
            let scale: Double = name.contains("(ms)") || letters.hasSuffix("ms") ? 1e-3
                : name.contains("(ns)") || letters.hasSuffix("ns") ? 1e-9 : 1
            let timeNames = ["t", "time", "timestamp", "seconds", "times", "timesec", "tms", "timems", "timens", "tns"]
            if time == nil, timeNames.contains(letters) {
                time = (index, scale)
                continue
            }
            for axis in ["x", "y", "z"] where axes[Character(axis)] == nil {
                if ["", "a", "acc", "accel", "acceleration", "accelerometer"].map({ $0 + axis }).contains(letters) {
                    axes[Character(axis)] = index
                }
            }
        }
        guard let time, let x = axes["x"], let y = axes["y"], let z = axes["z"] else { return nil }
        return ColumnLayout(format: .plain, names: names, time: time.index, timeScale: time.scale, axes: (x, y, z),
            unit: unit(names[x]))
    }

    /// The unit a column name declares: `(m/s^2)`, `m/s²`, `(g)`, `_g`.
    static func unit(_ name: String) -> AccelerationUnit? {
        if name.contains("m/s") { return .metresPerSecondSquared }
        if name.contains("(g)") || name.contains("[g]") || name.hasSuffix("_g") { return .standardGravity }
        return nil
    }
}

/// A single pass over the bytes of a CSV file (NUL-terminated), numbers parsed in place.
private struct Parser {
    let text: UnsafeMutableBufferPointer<UInt8>
    let file: String
    /// The offset of the next line to read.
    var position = 0
    var lineNumber = 0

    init(text: UnsafeMutableBufferPointer<UInt8>, file: String) {
        self.text = text
        self.file = file
    }

    private var end: Int { text.count - 1 }

    /// The next non-empty line that is not a comment (`#`, `;`), as a byte range without its
    /// line break; nil at the end.
    mutating func nextLine() -> Range<Int>? {
        while position < end {
            let start = position
            var stop = start
            while stop < end, text[stop] != UInt8(ascii: "\n") { stop += 1 }
            position = stop + 1
            lineNumber += 1
            var last = stop
            while last > start, text[last - 1] == UInt8(ascii: "\r") || text[last - 1] == UInt8(ascii: " ") { last -= 1 }
            if last == start || text[start] == UInt8(ascii: "#") || text[start] == UInt8(ascii: ";") { continue }
            return start..<last
        }
        return nil
    }

    mutating func parse() throws(CadenceError) -> AccelerometerRecording {
        guard let first = nextLine() else { throw CadenceError(file: file, .notARecording("the file is empty")) }
        guard first.count <= RecordingReader.maximumHeaderBytes else {
            throw CadenceError(file: file, .headerTooLong(bytes: first.count, limit: RecordingReader.maximumHeaderBytes))
        }
        guard let headerText = String(validating: text[first], as: UTF8.self) else {
            throw CadenceError(file: file, .notARecording("the first line is not text"))
        }
        let delimiter: UInt8 =
            headerText.contains("\t") ? UInt8(ascii: "\t") : headerText.contains(";") ? UInt8(ascii: ";") : UInt8(ascii: ",")
        let fields = headerText.split(separator: Character(UnicodeScalar(delimiter)), omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "\"' ")) }
        var layout: ColumnLayout
        var pendingLine: Range<Int>?
        if fields.count >= 4, fields.allSatisfy({ Double($0) != nil }) {
            layout = ColumnLayout(format: .plain, names: ["t", "x", "y", "z"] + fields.dropFirst(4).map { _ in "" },
                time: 0, timeScale: 1, axes: (1, 2, 3), unit: nil)
            pendingLine = first
        } else if let recognised = ColumnLayout.recognise(fields) {
            layout = recognised
        } else {
            throw CadenceError(file: file, .notARecording(
                "the header names no time column and x, y, z axes: '\(headerText.prefix(80))'"))
        }
        if delimiter != UInt8(ascii: ",") {
            // Decimal commas (phyphox's European export): the separator is not a comma, so a comma is a decimal point.
            for index in first.upperBound..<end where text[index] == UInt8(ascii: ",") { text[index] = UInt8(ascii: ".") }
        }
        let columnCount = layout.names.count
        let needed = max(layout.time, layout.axes.x, layout.axes.y, layout.axes.z) + 1
        var times: [Double] = [], x: [Double] = [], y: [Double] = [], z: [Double] = []
        let estimate = max(16, (end - first.upperBound) / max(columnCount * 8, 1))
        times.reserveCapacity(estimate); x.reserveCapacity(estimate); y.reserveCapacity(estimate); z.reserveCapacity(estimate)
        var values = [Double](repeating: 0, count: needed)
        var line = pendingLine ?? nextLine()
        var clockTime: ClockTime?
        while let range = line {
            var cursor = range.lowerBound
            for column in 0..<needed {
                let fieldStart = cursor
                while cursor < range.upperBound, text[cursor] != delimiter { cursor += 1 }
                let field = fieldStart..<cursor
                if column == layout.time || column == layout.axes.x || column == layout.axes.y || column == layout.axes.z {
                    if column == layout.time, clockTime != nil || (times.isEmpty && ClockTime.looksLikeClock(text, field)) {
                        if clockTime == nil { clockTime = ClockTime() }
                        guard let seconds = clockTime!.seconds(text, field) else { throw notANumber(column, field, layout) }
                        values[column] = seconds
                    } else {
                        guard let value = number(field) else { throw notANumber(column, field, layout) }
                        values[column] = value
                    }
                }
                if column < needed - 1 {
                    guard cursor < range.upperBound else {
                        throw CadenceError(file: file, .missingFields(line: lineNumber, expected: columnCount, found: column + 1))
                    }
                    cursor += 1
                }
            }
            let time = values[layout.time] * layout.timeScale
            if let previous = times.last {
                if time == previous { throw CadenceError(file: file, .duplicateTime(line: lineNumber, time: time)) }
                if time < previous {
                    throw CadenceError(file: file, .nonMonotonicTime(line: lineNumber, time: time, previous: previous))
                }
            }
            times.append(time)
            x.append(values[layout.axes.x])
            y.append(values[layout.axes.y])
            z.append(values[layout.axes.z])
            line = nextLine()
        }
        try checkRate(times)
        return AccelerometerRecording(format: layout.format, times: times, x: x, y: y, z: z, declaredUnit: layout.unit)
    }

    /// The finite number filling `field` (surrounding spaces and quotes allowed), or nil.
    private func number(_ field: Range<Int>) -> Double? {
        var start = field.lowerBound, stop = field.upperBound
        while start < stop, text[start] == UInt8(ascii: " ") || text[start] == UInt8(ascii: "\"") { start += 1 }
        while stop > start, text[stop - 1] == UInt8(ascii: " ") || text[stop - 1] == UInt8(ascii: "\"") { stop -= 1 }
        guard start < stop else { return nil }
        let base = UnsafeMutableRawPointer(text.baseAddress!).assumingMemoryBound(to: CChar.self)
        var parsedEnd: UnsafeMutablePointer<CChar>?
        let value = strtod(base + start, &parsedEnd)
        guard let parsedEnd, parsedEnd - base == stop, value.isFinite else { return nil }
        return value
    }

    private func notANumber(_ column: Int, _ field: Range<Int>, _ layout: ColumnLayout) -> CadenceError {
        let name = layout.names.indices.contains(column) ? layout.names[column] : "\(column + 1)"
        return CadenceError(file: file, .notANumber(line: lineNumber, column: name, text: String(decoding: text[field], as: UTF8.self)))
    }

    /// Enough samples, and a median interval within the accepted rates.
    private func checkRate(_ times: [Double]) throws(CadenceError) {
        guard times.count >= RecordingReader.minimumSamples else {
            let span = (times.last ?? 0) - (times.first ?? 0)
            let minimum = CadenceAnalyzer.Settings().window
            throw CadenceError(file: file, .tooFewSamples(count: times.count, seconds: span, minimumSeconds: minimum))
        }
        let rate = 1 / Sampling.medianInterval(times)
        guard RecordingReader.acceptedRates.contains(rate) else {
            throw CadenceError(file: file, .absurdRate(hertz: rate, accepted: RecordingReader.acceptedRates))
        }
        let span = times[times.count - 1] - times[0]
        let limit = min(RecordingReader.maximumSeconds, RecordingReader.maximumGridSamples / rate)
        guard span <= limit else { throw CadenceError(file: file, .spanTooLong(seconds: span, limitSeconds: limit)) }
    }
}

/// Clock times in a time column (Physics Toolbox): `2018-10-03 17:23:55.4640`, `17:23:55.464`,
/// `17:23:55:464` (the last field milliseconds), in seconds since the first day's midnight.
struct ClockTime {
    private var firstDay: Int?

    static func looksLikeClock(_ text: UnsafeMutableBufferPointer<UInt8>, _ field: Range<Int>) -> Bool {
        text[field].contains(UInt8(ascii: ":"))
    }

    mutating func seconds(_ text: UnsafeMutableBufferPointer<UInt8>, _ field: Range<Int>) -> Double? {
        let string = String(decoding: text[field], as: UTF8.self).trimmingCharacters(in: CharacterSet(charactersIn: "\" "))
        let parts = string.split(separator: " ")
        guard let clock = parts.last else { return nil }
        var day = 0
        if parts.count == 2 {
            let date = parts[0].split(separator: "-").compactMap { Int($0) }
            guard date.count == 3, (1...9999).contains(date[0]), (1...12).contains(date[1]), (1...31).contains(date[2]) else { return nil }
            day = Self.daysFromCivil(year: date[0], month: date[1], day: date[2])
        }
        let fields = clock.split(separator: ":", omittingEmptySubsequences: false)
        // A time of day: hours 0-23 (24 for the end of a day), minutes 0-59, seconds and milliseconds below 61 and 1000.
        guard fields.count == 3 || fields.count == 4, let hours = Int(fields[0]), (0...24).contains(hours),
            let minutes = Int(fields[1]), (0..<60).contains(minutes),
            let secondsValue = Double(fields[2].replacingOccurrences(of: ",", with: ".")), (0..<61).contains(secondsValue)
        else { return nil }
        var seconds = Double(hours * 3600 + minutes * 60) + secondsValue
        if fields.count == 4 {
            guard let milliseconds = Double(fields[3]), (0..<1000).contains(milliseconds) else { return nil }
            seconds += milliseconds / 1000
        }
        if firstDay == nil { firstDay = day }
        return Double(day - firstDay!) * 86_400 + seconds
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
