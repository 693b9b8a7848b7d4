import Foundation

/// Writes FIT files byte by byte as Garmin's FIT protocol documents them (the FIT SDK's "FIT
/// File Structure"), for the tests and the fuzz seeds of the workout readers: a 14-byte header
/// (its size, protocol 2.0, a profile version, the size of the records, `.FIT`, the header's
/// CRC), definition and data messages (normal headers, or compressed-timestamp ones), and the
/// file's CRC-16 (CRC-16/ARC, computed here bit by bit: independently of the decoder's tables).
public struct FITFileWriter: Sendable {
    /// The FIT base types written.
    public enum BaseType: UInt8, Sendable {
        case enumeration = 0x00, uint8 = 0x02, uint16 = 0x84, uint32 = 0x86

        public var size: Int {
            switch self {
            case .enumeration, .uint8: 1
            case .uint16: 2
            case .uint32: 4
            }
        }
    }

    /// The global message numbers and fields of the FIT profile that the tests write.
    public enum Profile {
        public static let fileID: UInt16 = 0, sport: UInt16 = 12, session: UInt16 = 18, lap: UInt16 = 19, record: UInt16 = 20
        /// `file_id.type` of an activity and of a course.
        public static let activity: UInt64 = 4, course: UInt64 = 6
        /// `sport` values.
        public static let running: UInt64 = 1, cycling: UInt64 = 2
    }

    private var definitions: [UInt8: (fields: [BaseType], bigEndian: Bool)] = [:]
    /// The records written so far (definition and data messages).
    public private(set) var records: [UInt8] = []

    public init() {}

    /// A definition message of local type `local` (0-15) for `global`, its fields (number, type) in order.
    public mutating func define(local: UInt8, global: UInt16, fields: [(number: UInt8, type: BaseType)], bigEndian: Bool = false) {
        records.append(0x40 | local)
        records += [0, bigEndian ? 1 : 0]
        records += bigEndian ? [UInt8(global >> 8), UInt8(global & 0xFF)] : [UInt8(global & 0xFF), UInt8(global >> 8)]
        records.append(UInt8(fields.count))
        for field in fields { records += [field.number, UInt8(field.type.size), field.type.rawValue] }
        definitions[local] = (fields.map(\.type), bigEndian)
    }

    /// A data message of local type `local`, its values in its definition's order (all bits set: invalid).
    public mutating func data(local: UInt8, _ values: [UInt64]) {
        records.append(local)
        append(values, local: local)
    }

    /// A data message with a compressed-timestamp header: local type 0-3, the time's 5 low bits.
    public mutating func compressedData(local: UInt8, timeOffset: UInt8, _ values: [UInt64]) {
        records.append(0x80 | (local & 0x03) << 5 | (timeOffset & 0x1F))
        append(values, local: local)
    }

    private mutating func append(_ values: [UInt64], local: UInt8) {
        guard let definition = definitions[local] else { preconditionFailure("local type \(local) has no definition") }
        precondition(values.count == definition.fields.count, "one value per field")
        for (value, type) in zip(values, definition.fields) {
            let bytes = (0..<type.size).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
            records += definition.bigEndian ? bytes.reversed() : bytes
        }
    }

    /// The whole file: header, records and CRC.
    public var bytes: [UInt8] {
        var file: [UInt8] = [14, 0x20, 0x54, 0x08]  // header size, protocol 2.0, profile 21.32
        let size = UInt32(records.count)
        file += (0..<4).map { UInt8(truncatingIfNeeded: size >> (8 * $0)) }
        file += Array(".FIT".utf8)
        let headerCRC = Self.crc(file)
        file += [UInt8(headerCRC & 0xFF), UInt8(headerCRC >> 8)]
        file += records
        let crc = Self.crc(file)
        return file + [UInt8(crc & 0xFF), UInt8(crc >> 8)]
    }

    /// CRC-16/ARC (reflected polynomial 0xA001, from 0), what Garmin's FIT CRC computes.
    public static func crc(_ bytes: [UInt8]) -> UInt16 {
        var crc: UInt16 = 0
        for byte in bytes {
            crc ^= UInt16(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xA001 : crc >> 1 }
        }
        return crc
    }
}

/// One second of a workout, as the tests write it into GPX, TCX and FIT files.
public struct WorkoutSecond: Sendable {
    /// The cadence as the watch stores it (per foot when running), per minute.
    public var cadence: Double
    public var heartRate: Int
    /// Metres per second.
    public var speed: Double

    public init(cadence: Double, heartRate: Int, speed: Double) {
        self.cadence = cadence
        self.heartRate = heartRate
        self.speed = speed
    }

    /// `seconds` seconds of the same values.
    public static func steady(_ seconds: Int, cadence: Double, heartRate: Int, speed: Double) -> [WorkoutSecond] {
        Array(repeating: WorkoutSecond(cadence: cadence, heartRate: heartRate, speed: speed), count: seconds)
    }
}

/// Workout files of known content, one sample a second from 2024-05-01 07:30:00 UTC.
public enum WorkoutFiles {
    /// The FIT time of the first sample (seconds since 1989-12-31 00:00 UTC).
    public static let fitStart: UInt64 = 1_083_396_600

    /// A FIT file: a `file_id` of `fileType`, then a record a second (timestamp, heart rate,
    /// cadence and its fractional part, distance, speed), then a `session` per sport of `sports`.
    public static func fit(_ seconds: [WorkoutSecond], sports: [UInt64] = [], fileType: UInt64 = FITFileWriter.Profile.activity,
        bigEndian: Bool = false
    ) -> [UInt8] {
        var writer = FITFileWriter()
        writer.define(local: 0, global: FITFileWriter.Profile.fileID, fields: [(0, .enumeration), (1, .uint16), (2, .uint16)])
        writer.data(local: 0, [fileType, 255, 1])
        writer.define(local: 1, global: FITFileWriter.Profile.record, fields: [
            (253, .uint32), (3, .uint8), (4, .uint8), (53, .uint8), (5, .uint32), (6, .uint16),
        ], bigEndian: bigEndian)
        var travelled = 0.0
        for (index, second) in seconds.enumerated() {
            let whole = second.cadence.rounded(.down)
            writer.data(local: 1, [
                fitStart + UInt64(index), UInt64(second.heartRate), UInt64(whole), UInt64(((second.cadence - whole) * 128).rounded()),
                UInt64((travelled * 100).rounded()), UInt64((second.speed * 1000).rounded()),
            ])
            travelled += second.speed
        }
        writer.define(local: 2, global: FITFileWriter.Profile.session, fields: [(253, .uint32), (5, .enumeration)])
        for sport in sports { writer.data(local: 2, [fitStart + UInt64(seconds.count), sport]) }
        return writer.bytes
    }

    /// The time of second `index` in ISO 8601.
    static func time(_ index: Int) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: Date(timeIntervalSince1970: 1_714_548_600 + Double(index)))
    }

    /// A GPX 1.1 track with Garmin's TrackPointExtension (`gpxtpx:hr`, `gpxtpx:cad` unless
    /// `cadence` is false), northwards along a meridian at each second's speed; the track's
    /// `type` when given.
    public static func gpx(_ seconds: [WorkoutSecond], type: String? = nil, cadence: Bool = true) -> String {
        var travelled = 0.0
        let points = seconds.enumerated().map { index, second in
            defer { travelled += second.speed }
            let latitude = 45 + travelled / 6_371_008.8 * 180 / .pi
            let extensions = "<gpxtpx:hr>\(second.heartRate)</gpxtpx:hr>" + (cadence ? "<gpxtpx:cad>\(Int(second.cadence))</gpxtpx:cad>" : "")
            return "<trkpt lat=\"\(latitude)\" lon=\"7.0\"><time>\(time(index))</time><extensions><gpxtpx:TrackPointExtension>"
                + extensions + "</gpxtpx:TrackPointExtension></extensions></trkpt>"
        }
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <gpx version="1.1" creator="tests" xmlns="http://www.topografix.com/GPX/1/1" \
            xmlns:gpxtpx="http://www.garmin.com/xmlschemas/TrackPointExtension/v1">
            <trk>\(type.map { "<type>\($0)</type>" } ?? "")<trkseg>
            \(points.joined(separator: "\n"))
            </trkseg></trk>
            </gpx>
            """
    }

    /// A TCX activity of `sport` (Running, Biking, Other): `Cadence` (or the `RunCadence`
    /// extension when running), `HeartRateBpm`, `DistanceMeters`.
    public static func tcx(_ seconds: [WorkoutSecond], sport: String = "Running") -> String {
        var travelled = 0.0
        let points = seconds.enumerated().map { index, second in
            defer { travelled += second.speed }
            let cadence = sport == "Running"
                ? "<Extensions><ns3:TPX><ns3:RunCadence>\(Int(second.cadence))</ns3:RunCadence></ns3:TPX></Extensions>"
                : "<Cadence>\(Int(second.cadence))</Cadence>"
            return "<Trackpoint><Time>\(time(index))</Time><DistanceMeters>\(travelled)</DistanceMeters>"
                + "<HeartRateBpm><Value>\(second.heartRate)</Value></HeartRateBpm>\(cadence)</Trackpoint>"
        }
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <TrainingCenterDatabase xmlns="http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2" \
            xmlns:ns3="http://www.garmin.com/xmlschemas/ActivityExtension/v2">
            <Activities><Activity Sport="\(sport)"><Id>\(time(0))</Id><Lap StartTime="\(time(0))"><Track>
            \(points.joined(separator: "\n"))
            </Track></Lap></Activity></Activities>
            </TrainingCenterDatabase>
            """
    }
}
