import Foundation
import GRDB

extension Row {
    /// The date stored in `column`, or the start of 1970 when it holds something that is not
    /// a date. GRDB's typed subscript stops the process on such a value, and a library file
    /// may have been edited by hand or damaged: a reader must not take the server down.
    func storedDate(_ column: String) -> Date {
        Date.fromDatabaseValue(self[column] as DatabaseValue) ?? Date(timeIntervalSince1970: 0)
    }
}
