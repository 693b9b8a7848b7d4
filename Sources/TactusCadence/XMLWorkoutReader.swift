import Foundation
import TactusModel

#if canImport(FoundationXML)
import FoundationXML
#endif

/// Reads GPX (with Garmin's TrackPointExtension) and TCX workouts with Foundation's `XMLParser`
/// (libxml2). A document type declaration is refused before parsing, wherever it is in the file
/// (a comment of any length may come before it): neither format has one, and entities are how
/// XML files attack their readers. So is anything but UTF-8 text: a NUL byte (in UTF-16, the
/// declaration's letters would not be found), and bytes that are no UTF-8 (Foundation's parser,
/// which has libxml2 recover from errors, traps on an element name that is not UTF-8).
enum XMLWorkoutReader {
    static func read(_ bytes: [UInt8], format: RecordingFormat, file: String) throws(CadenceError) -> Workout {
        if let offset = firstNonUTF8(bytes) {
            throw CadenceError(file: file, .malformedWorkout(format: format, reason:
                "byte \(offset) is \(bytes[offset] == 0 ? "a NUL" : "not UTF-8"): the file is not UTF-8 text (convert it to UTF-8)"))
        }
        for declaration in ["<!DOCTYPE", "<!ENTITY"] where contains(bytes, Array(declaration.utf8)) {
            throw CadenceError(file: file, .malformedWorkout(format: format, reason: "a document type declaration, which neither GPX nor TCX has"))
        }
        let collector = TrackPointCollector(format: format)
        // A stream, read a block at a time: given the whole file at once, libxml2 refuses a
        // document of more than 10 MB ("huge input lookup"), a GPX of about 16 hours.
        let parser = XMLParser(stream: InputStream(data: Data(bytes)))
        parser.shouldResolveExternalEntities = false
        parser.delegate = collector
        let parsed = parser.parse()
        if collector.tooManySamples { throw Workout.tooManySamples(format: format, file: file) }
        if !parsed {
            let reason = collector.problem ?? parser.parserError.map { "\($0.localizedDescription)" } ?? "malformed XML"
            throw CadenceError(file: file, .malformedWorkout(format: format, reason: "line \(parser.lineNumber): \(reason)"))
        }
        if let open = collector.openElement {
            throw CadenceError(file: file, .malformedWorkout(
                format: format, reason: "line \(parser.lineNumber): the document ends inside <\(open)> (a file cut short?)"))
        }
        let name = format == .gpx ? "gpxtpx:cad (Garmin's TrackPointExtension)" : "Cadence or RunCadence"
        return Workout(format: format, samples: collector.samples, cadenceName: name, sport: WorkoutSport.combined(collector.sports))
    }

    /// The offset of the first byte of `bytes` that is a NUL or no part of a UTF-8 character; nil when they are all text.
    private static func firstNonUTF8(_ bytes: [UInt8]) -> Int? {
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        var offset = 0
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar):
                if scalar.value == 0 { return offset }
                offset += UTF8.width(scalar)
            case .emptyInput:
                return nil
            case .error:
                return offset
            }
        }
    }

    /// Whether `pattern` occurs in `bytes`.
    private static func contains(_ bytes: [UInt8], _ pattern: [UInt8]) -> Bool {
        guard let first = pattern.first, bytes.count >= pattern.count else { return false }
        var index = 0
        while let found = bytes[index...].firstIndex(of: first) {
            guard found + pattern.count <= bytes.count else { return false }
            if bytes[found..<found + pattern.count].elementsEqual(pattern) { return true }
            index = found + 1
        }
        return false
    }
}

/// Collects the track points of a GPX or TCX document: each `trkpt` (GPX) or `Trackpoint`
/// (TCX) becomes a sample; names are compared without their namespace prefix. The sport is a
/// GPX track's `type`, a TCX activity's `Sport` attribute.
private final class TrackPointCollector: NSObject, XMLParserDelegate {
    let format: RecordingFormat
    var samples: [Workout.Sample] = []
    /// The different sports of the tracks or activities, in order.
    var sports: [String] = []
    var problem: String?
    /// Whether the document had more track points than ``Workout/maximumSamples`` (parsing stopped there).
    var tooManySamples = false
    private var point: PointFields?
    private var text = ""
    private var path: [String] = []
    /// The innermost element still open, nil once the root element has closed (or none opened).
    var openElement: String? { path.last }
    private var lastPosition: (latitude: Double, longitude: Double)?
    private var travelled = 0.0

    /// What a track point has said so far.
    private struct PointFields {
        var time: Double?
        var latitude: Double?
        var longitude: Double?
        var sample = Workout.Sample(time: 0)
    }

    init(format: RecordingFormat) {
        self.format = format
    }

    private var pointElement: String { format == .gpx ? "trkpt" : "Trackpoint" }

    func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        let name = Self.local(elementName)
        path.append(name)
        text = ""
        if name == pointElement {
            point = PointFields()
            point?.latitude = attributes["lat"].flatMap { coordinate($0, "lat", within: 90, parser) }
            point?.longitude = attributes["lon"].flatMap { coordinate($0, "lon", within: 180, parser) }
        } else if format == .tcx, name == "Activity", let sport = attributes["Sport"] {
            addSport(sport)
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        if point != nil || isTrackType, text.utf8.count < 256 { text += string }
    }

    /// Whether the element open is a GPX track's `type`.
    private var isTrackType: Bool {
        format == .gpx && path.count >= 2 && path[path.count - 1] == "type" && path[path.count - 2] == "trk"
    }

    private func addSport(_ text: String) {
        if let sport = WorkoutSport.normalised(text), !sports.contains(sport), sports.count < 16 { sports.append(sport) }
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
        let name = Self.local(elementName)
        if isTrackType { addSport(text) }
        defer { path.removeLast() }
        guard point != nil else { return }
        let value = text.trimmingCharacters(in: .whitespacesAndNewlines)
        switch name {
        case "time", "Time":
            guard let seconds = ISO8601Time.seconds(value) else {
                fail(parser, "a track point's time '\(value.prefix(40))' is not an ISO 8601 date and time")
                return
            }
            point?.time = seconds
        case "cad", "Cadence", "RunCadence":
            point?.sample.cadence = number(value, name, parser)
        case "hr":
            point?.sample.heartRate = number(value, name, parser)
        case "Value" where path.dropLast().last == "HeartRateBpm":
            point?.sample.heartRate = number(value, "HeartRateBpm", parser)
        case "DistanceMeters":
            point?.sample.distance = number(value, name, parser)
        case "Speed", "speed":
            point?.sample.speed = number(value, name, parser)
        case "LatitudeDegrees":
            point?.latitude = coordinate(value, name, within: 90, parser)
        case "LongitudeDegrees":
            point?.longitude = coordinate(value, name, within: 180, parser)
        case pointElement:
            finishPoint(parser)
        default:
            break
        }
    }

    private func finishPoint(_ parser: XMLParser) {
        guard let fields = point else { return }
        point = nil
        guard let time = fields.time else {
            fail(parser, "a track point without a time")
            return
        }
        guard samples.count < Workout.maximumSamples else {
            tooManySamples = true
            parser.abortParsing()
            return
        }
        var sample = fields.sample
        sample.time = time
        if sample.distance == nil, let latitude = fields.latitude, let longitude = fields.longitude {
            if let last = lastPosition { travelled += Haversine.metres(from: last, to: (latitude, longitude)) }
            lastPosition = (latitude, longitude)
            sample.distance = travelled
        }
        samples.append(sample)
    }

    /// A latitude or longitude attribute: a number of at most `limit` degrees either way.
    private func coordinate(_ text: String, _ name: String, within limit: Double, _ parser: XMLParser) -> Double? {
        guard let value = Double(text), abs(value) <= limit else {
            fail(parser, "a track point's \(name) '\(text.prefix(40))' is not a number of degrees within -\(Int(limit))...\(Int(limit))")
            return nil
        }
        return value
    }

    private func number(_ text: String, _ name: String, _ parser: XMLParser) -> Double? {
        guard let value = Double(text), value.isFinite else {
            fail(parser, "\(name) '\(text.prefix(40))' is not a finite number")
            return nil
        }
        return value
    }

    private func fail(_ parser: XMLParser, _ reason: String) {
        if problem == nil { problem = reason }
        parser.abortParsing()
    }

    /// `name` without its namespace prefix (`gpxtpx:cad` is `cad`).
    private static func local(_ name: String) -> String {
        name.split(separator: ":").last.map(String.init) ?? name
    }
}

/// Distances on the Earth between two positions in degrees.
enum Haversine {
    static let earthRadius = 6_371_008.8

    static func metres(from a: (latitude: Double, longitude: Double), to b: (latitude: Double, longitude: Double)) -> Double {
        let radians = Double.pi / 180
        let dLatitude = (b.latitude - a.latitude) * radians, dLongitude = (b.longitude - a.longitude) * radians
        let h = sin(dLatitude / 2) * sin(dLatitude / 2)
            + cos(a.latitude * radians) * cos(b.latitude * radians) * sin(dLongitude / 2) * sin(dLongitude / 2)
        return 2 * earthRadius * asin(min(1, h.squareRoot()))
    }
}

/// ISO 8601 date and time as GPX and TCX write them: `2024-05-01T07:30:00Z`,
/// `2024-05-01T07:30:00.250+02:00`, without a zone read as UTC.
enum ISO8601Time {
    /// Seconds since 1970, or nil when `text` is not such a date and time.
    static func seconds(_ text: String) -> Double? {
        let characters = Array(text.utf8)
        guard characters.count >= 19, characters[4] == UInt8(ascii: "-"), characters[7] == UInt8(ascii: "-"),
            characters[10] == UInt8(ascii: "T") || characters[10] == UInt8(ascii: " "),
            characters[13] == UInt8(ascii: ":"), characters[16] == UInt8(ascii: ":"),
            let year = digits(characters, 0..<4), let month = digits(characters, 5..<7), (1...12).contains(month),
            let day = digits(characters, 8..<10), (1...31).contains(day), let hour = digits(characters, 11..<13), hour < 25,
            let minute = digits(characters, 14..<16), minute < 60, let second = digits(characters, 17..<19), second < 61
        else { return nil }
        var index = 19
        var fraction = 0.0
        if index < characters.count, characters[index] == UInt8(ascii: ".") {
            var scale = 0.1
            index += 1
            let start = index
            while index < characters.count, let digit = digit(characters[index]) {
                fraction += Double(digit) * scale
                scale /= 10
                index += 1
            }
            guard index > start, index - start <= 12 else { return nil }
        }
        var offset = 0
        if index < characters.count {
            let sign = characters[index]
            if sign == UInt8(ascii: "Z"), index == characters.count - 1 {
                index += 1
            } else if sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-"), characters.count == index + 6,
                characters[index + 3] == UInt8(ascii: ":"), let hours = digits(characters, index + 1..<index + 3), hours < 24,
                let minutes = digits(characters, index + 4..<index + 6), minutes < 60
            {
                offset = (hours * 3600 + minutes * 60) * (sign == UInt8(ascii: "+") ? 1 : -1)
                index += 6
            } else {
                return nil
            }
        }
        guard index == characters.count else { return nil }
        let days = ClockTime.daysFromCivil(year: year, month: month, day: day)
        return Double(days * 86_400 + hour * 3600 + minute * 60 + second - offset) + fraction
    }

    private static func digit(_ character: UInt8) -> Int? {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(character) ? Int(character - UInt8(ascii: "0")) : nil
    }

    private static func digits(_ characters: [UInt8], _ range: Range<Int>) -> Int? {
        var value = 0
        for index in range {
            guard let digit = digit(characters[index]) else { return nil }
            value = value * 10 + digit
        }
        return value
    }
}
