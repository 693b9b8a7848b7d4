import TactusStretch

extension OutputFile {
    /// The file a command downloads into, checked (and its temporary created) before the server
    /// is asked for it: what refuses it (a directory, an existing file without `replacing`, one
    /// of `inputs`) is a failure naming the path.
    static func checked(_ path: String, replacing: Bool, sparing inputs: [String] = []) throws -> OutputFile {
        do throws(StretchError) {
            return try OutputFile(path: path, replacing: replacing, sparing: inputs)
        } catch {
            throw CommandFailure(error.description)
        }
    }

    /// `bytes` written and put in place; a failure names the path.
    func save(_ bytes: [UInt8]) throws {
        do throws(StretchError) {
            try write(bytes)
            try place()
        } catch {
            throw CommandFailure(error.description)
        }
    }
}
