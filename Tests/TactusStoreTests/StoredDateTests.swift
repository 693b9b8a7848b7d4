import Foundation
import GRDB
import Testing

@testable import TactusStore

/// The library's dates are written without GRDB's `DateFormatter`, as the same text.
@Suite struct StoredDateTests {
    @Test func theTextIsGRDBsOwnForDatesOfEveryKind() throws {
        var generator = SystemRandomNumberGenerator()
        var dates = [
            Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 0.0009), Date(timeIntervalSince1970: 0.9999),
            Date(timeIntervalSince1970: 951_782_400.5),  // 2000-02-29, a leap day
            Date(timeIntervalSince1970: -1.25),  // before 1970: the milliseconds still count up within the second
            Date(timeIntervalSince1970: 253_402_300_799.999),  // 9999-12-31 23:59:59.999
            Date(timeIntervalSince1970: 253_402_300_800),  // year 10000: GRDB's text
            Date(),
        ]
        for _ in 0..<20_000 {
            dates.append(Date(timeIntervalSince1970: Double.random(in: -2e9...4e9, using: &generator)))
            // Near the present, to the microsecond, as the library stores it.
            dates.append(Date(timeIntervalSince1970: 1.8e9 + Double(Int.random(in: 0..<1_000_000_000, using: &generator)) / 1e6))
        }
        for date in dates {
            let grdb = try #require(String.fromDatabaseValue(date.databaseValue))
            #expect(StoredDate.text(date) == grdb, "\(date.timeIntervalSince1970)")
        }
    }

    @Test func theTextReadsBackAsTheDateToTheMillisecond() throws {
        let date = Date(timeIntervalSince1970: 1_795_000_000.123_456)
        let read = try #require(Date.fromDatabaseValue(StoredDate.text(date).databaseValue))
        #expect(abs(read.timeIntervalSince1970 - 1_795_000_000.123) < 1e-6)
    }
}
