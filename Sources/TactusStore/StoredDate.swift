import Foundation
import GRDB

#if canImport(Glibc)
import Glibc
#endif

/// Dates as the library stores them: GRDB's text, `yyyy-MM-dd HH:mm:ss.SSS` in UTC (to the
/// nearest millisecond), which sorts as the dates do and which GRDB reads back as a `Date`.
///
/// GRDB makes that text with a `DateFormatter`, through ICU: several microseconds a date, and
/// the coordinator stores about five dates for every job. Made here from the calendar fields
/// of `gmtime_r`, the same text costs a small fraction of that.
enum StoredDate {
    /// The stored text of the present moment.
    static var now: String { text(Date()) }

    /// The stored text of `date`: the same as GRDB's own for the years 1 to 9999 (outside,
    /// GRDB's).
    static func text(_ date: Date) -> String {
        let milliseconds = (date.timeIntervalSince1970 * 1000 + 0.5).rounded(.down)
        let wholeSeconds = (milliseconds / 1000).rounded(.down)
        var seconds = time_t(exactly: wholeSeconds) ?? 0
        var fields = tm()
        guard time_t(exactly: wholeSeconds) != nil, gmtime_r(&seconds, &fields) != nil,
            (1...9999).contains(Int(fields.tm_year) + 1900)
        else {
            return String.fromDatabaseValue(date.databaseValue) ?? ""
        }
        let millis = Int(milliseconds - wholeSeconds * 1000)
        var text = [UInt8](repeating: 0, count: 23)
        func put(_ value: Int, digits: Int, at start: Int) {
            var value = value
            for index in stride(from: start + digits - 1, through: start, by: -1) {
                text[index] = UInt8(48 + value % 10)
                value /= 10
            }
        }
        put(Int(fields.tm_year) + 1900, digits: 4, at: 0)
        text[4] = UInt8(ascii: "-")
        put(Int(fields.tm_mon) + 1, digits: 2, at: 5)
        text[7] = UInt8(ascii: "-")
        put(Int(fields.tm_mday), digits: 2, at: 8)
        text[10] = UInt8(ascii: " ")
        put(Int(fields.tm_hour), digits: 2, at: 11)
        text[13] = UInt8(ascii: ":")
        put(Int(fields.tm_min), digits: 2, at: 14)
        text[16] = UInt8(ascii: ":")
        put(Int(fields.tm_sec), digits: 2, at: 17)
        text[19] = UInt8(ascii: ".")
        put(millis, digits: 3, at: 20)
        return String(decoding: text, as: UTF8.self)
    }
}
