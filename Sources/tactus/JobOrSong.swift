import ArgumentParser

/// A job id (all digits) or a song id, as `status` and `cancel` take them.
enum JobOrSong {
    case job(Int64)
    case song(String)

    init(_ text: String) throws {
        if !text.isEmpty, text.allSatisfy(\.isASCII), text.allSatisfy(\.isNumber) {
            guard let job = Int64(text), job >= 1 else { throw ValidationError("'\(text)' is not a job id (1 or more).") }
            self = .job(job)
            return
        }
        let allowed = { (c: Character) in c.isASCII && (c.isLetter || c.isNumber || c == "." || c == "_" || c == "-") }
        guard (1...128).contains(text.count), text.allSatisfy(allowed) else {
            throw ValidationError("'\(text)' is neither a job id (a number) nor a song id (64 hex digits).")
        }
        self = .song(text)
    }
}
