import TactusModel

/// A small decoder of Garmin's FIT format (the FIT SDK's "Flexible and Interoperable Data
/// Transfer" protocol, as documented by Garmin): enough of it to read an activity's `record`
/// messages (timestamp, heart rate, cadence, fractional cadence, distance, speed) and its sport
/// (the `session` messages', else the `sport` message's, else the `lap` messages').
///
/// Bounded and hostile-input safe: every read is checked against the data size the header
/// announces (itself within the file), the file's CRC is checked, a data message must follow a
/// definition of its local type, and nothing is allocated beyond one sample per record, at most
/// ``Workout/maximumSamples``.
enum FITDecoder {
    /// Whether `bytes` start with a FIT file header (12 or 14 bytes, `.FIT` at bytes 8-11).
    static func isFIT(_ bytes: [UInt8]) -> Bool {
        bytes.count >= 12 && (bytes[0] == 12 || bytes[0] == 14) && Array(bytes[8..<12]) == Array(".FIT".utf8)
    }

    /// The global message numbers and fields read (FIT profile).
    private enum Message {
        static let fileID: UInt16 = 0
        static let sport: UInt16 = 12
        static let session: UInt16 = 18
        static let lap: UInt16 = 19
        static let record: UInt16 = 20
    }

    /// The field holding the sport in each message that has one (FIT profile).
    private static let sportField: [UInt16: UInt8] = [Message.sport: 0, Message.session: 5, Message.lap: 25]

    private enum RecordField {
        static let timestamp: UInt8 = 253
        static let heartRate: UInt8 = 3
        static let cadence: UInt8 = 4
        static let distance: UInt8 = 5
        static let speed: UInt8 = 6
        static let fractionalCadence: UInt8 = 53
        static let enhancedSpeed: UInt8 = 73
    }

    /// A definition message: how the data messages of one local type are laid out.
    private struct Definition {
        var global: UInt16
        var bigEndian: Bool
        /// (field number, size in bytes) in order; developer fields as number 255.
        var fields: [(number: UInt8, size: Int)]
        var size: Int
    }

    static func workout(_ bytes: [UInt8], file: String) throws(CadenceError) -> Workout {
        func malformed(_ reason: String) -> CadenceError { CadenceError(file: file, .malformedWorkout(format: .fit, reason: reason)) }
        guard isFIT(bytes) else { throw malformed("no FIT header") }
        let headerSize = Int(bytes[0])
        let dataSize = Int(bytes[4]) | Int(bytes[5]) << 8 | Int(bytes[6]) << 16 | Int(bytes[7]) << 24
        guard headerSize + dataSize + 2 <= bytes.count else {
            throw malformed("the header announces \(dataSize) bytes of records; the file has \(max(0, bytes.count - headerSize - 2))")
        }
        let end = headerSize + dataSize
        let expected = UInt16(bytes[end]) | UInt16(bytes[end + 1]) << 8
        guard crc(bytes[0..<end]) == expected else { throw malformed("the file's CRC does not match its bytes (a damaged file?)") }

        var definitions: [Definition?] = Array(repeating: nil, count: 16)
        var samples: [Workout.Sample] = []
        var fileType: Int?
        /// The different sports named, by the message that names them.
        var sports: [UInt16: [String]] = [:]
        var lastTimestamp: UInt32?
        var offset = headerSize
        while offset < end {
            let header = bytes[offset]
            offset += 1
            if header & 0x80 == 0, header & 0x40 != 0 {
                // A definition message.
                guard offset + 5 <= end else { throw malformed("a definition message cut short at byte \(offset)") }
                let bigEndian = bytes[offset + 1] == 1
                let global = bigEndian ? UInt16(bytes[offset + 2]) << 8 | UInt16(bytes[offset + 3])
                    : UInt16(bytes[offset + 2]) | UInt16(bytes[offset + 3]) << 8
                let count = Int(bytes[offset + 4])
                offset += 5
                guard offset + 3 * count <= end else { throw malformed("a definition message cut short at byte \(offset)") }
                var fields: [(number: UInt8, size: Int)] = []
                for index in 0..<count {
                    fields.append((bytes[offset + 3 * index], Int(bytes[offset + 3 * index + 1])))
                }
                offset += 3 * count
                if header & 0x20 != 0 {
                    guard offset < end else { throw malformed("a definition message cut short at byte \(offset)") }
                    let developerCount = Int(bytes[offset])
                    offset += 1
                    guard offset + 3 * developerCount <= end else { throw malformed("a definition message cut short at byte \(offset)") }
                    for index in 0..<developerCount { fields.append((255, Int(bytes[offset + 3 * index + 1]))) }
                    offset += 3 * developerCount
                }
                definitions[Int(header & 0x0F)] = Definition(
                    global: global, bigEndian: bigEndian, fields: fields, size: fields.reduce(0) { $0 + $1.size })
                continue
            }
            // A data message, with a normal or a compressed-timestamp header.
            let compressed = header & 0x80 != 0
            let local = compressed ? Int((header >> 5) & 0x03) : Int(header & 0x0F)
            guard let definition = definitions[local] else {
                throw malformed("a data message of local type \(local) at byte \(offset - 1) before its definition")
            }
            guard offset + definition.size <= end else { throw malformed("a data message cut short at byte \(offset)") }
            var values: [UInt8: UInt64] = [:]
            var position = offset
            for field in definition.fields {
                if field.number != 255, [1, 2, 4].contains(field.size) {
                    var value: UInt64 = 0
                    for index in 0..<field.size {
                        let byte = UInt64(bytes[position + (definition.bigEndian ? index : field.size - 1 - index)])
                        value = value << 8 | byte
                    }
                    // All bits set is FIT's "invalid" for unsigned fields.
                    if value != (UInt64(1) << (8 * UInt64(field.size))) - 1 { values[field.number] = value }
                }
                position += field.size
            }
            offset += definition.size
            if compressed, let last = lastTimestamp {
                let timeOffset = UInt32(header & 0x1F)
                var timestamp = (last & ~UInt32(0x1F)) | timeOffset
                if timeOffset < last & 0x1F { timestamp &+= 0x20 }
                values[RecordField.timestamp] = UInt64(timestamp)
            }
            if let timestamp = values[RecordField.timestamp] { lastTimestamp = UInt32(truncatingIfNeeded: timestamp) }
            switch definition.global {
            case Message.fileID:
                if fileType == nil, let type = values[0] { fileType = Int(type) }
            case Message.record:
                guard let timestamp = values[RecordField.timestamp] else { continue }
                var sample = Workout.Sample(time: Double(timestamp))
                if let cadence = values[RecordField.cadence] {
                    sample.cadence = Double(cadence) + Double(values[RecordField.fractionalCadence] ?? 0) / 128
                }
                sample.heartRate = values[RecordField.heartRate].map { Double($0) }
                sample.distance = values[RecordField.distance].map { Double($0) / 100 }
                sample.speed = (values[RecordField.enhancedSpeed] ?? values[RecordField.speed]).map { Double($0) / 1000 }
                guard samples.count < Workout.maximumSamples else { throw Workout.tooManySamples(format: .fit, file: file) }
                samples.append(sample)
            case Message.sport, Message.session, Message.lap:
                if let field = sportField[definition.global], let number = values[field] {
                    let sport = WorkoutSport.fitName(Int(number))
                    if sports[definition.global]?.contains(sport) != true { sports[definition.global, default: []].append(sport) }
                }
            default:
                continue
            }
        }
        guard let fileType else { throw malformed("no file_id message: not a FIT file a device wrote") }
        guard fileType == 4 else { throw CadenceError(file: file, .notAnActivity(fileType: Self.fileTypeName(fileType))) }
        let sport = [Message.session, Message.sport, Message.lap].lazy.compactMap { sports[$0] }.first
        return Workout(
            format: .fit, samples: samples, cadenceName: "cadence field in its record messages",
            sport: sport.flatMap(WorkoutSport.combined))
    }

    /// A FIT file type's name and number, as the FIT profile names them.
    static func fileTypeName(_ type: Int) -> String {
        let names = [1: "device", 2: "settings", 3: "sport", 5: "workout", 6: "course", 7: "schedules", 9: "weight",
                     10: "totals", 11: "goals", 14: "blood_pressure", 15: "monitoring_a", 20: "activity_summary",
                     28: "monitoring_daily", 32: "monitoring_b", 34: "segment", 35: "segment_list"]
        return names[type].map { "'\($0)' (\(type))" } ?? "\(type)"
    }

    /// The FIT CRC-16 of `bytes` (Garmin's nibble-table algorithm).
    static func crc<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> UInt16 {
        let table: [UInt16] = [0x0000, 0xCC01, 0xD801, 0x1400, 0xF001, 0x3C00, 0x2800, 0xE401,
                               0xA001, 0x6C00, 0x7800, 0xB401, 0x5000, 0x9C01, 0x8801, 0x4400]
        var crc: UInt16 = 0
        for byte in bytes {
            var tmp = table[Int(crc & 0xF)]
            crc = (crc >> 4) & 0x0FFF
            crc = crc ^ tmp ^ table[Int(byte & 0xF)]
            tmp = table[Int(crc & 0xF)]
            crc = (crc >> 4) & 0x0FFF
            crc = crc ^ tmp ^ table[Int((byte >> 4) & 0xF)]
        }
        return crc
    }
}
