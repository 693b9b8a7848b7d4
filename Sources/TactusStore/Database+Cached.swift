import GRDB

extension Database {
    /// Runs one SQL statement through the connection's statement cache: compiled once per
    /// connection, not at every call (compiling, with GRDB's authorizer, costs more than
    /// running the small statements of the job queue). Only for SQL whose text never varies
    /// with the values, which go in `arguments`: the cache keeps every distinct text.
    func executeCached(sql: String, arguments: StatementArguments = StatementArguments()) throws {
        try cachedStatement(sql: sql).execute(arguments: arguments)
    }
}
