import ArgumentParser

/// A job id (all digits) or a song, named as every command names one (``SongLookup``), as
/// `status` and `cancel` take them.
enum JobOrSong {
    case job(Int64)
    case song(String)

    init(_ text: String) throws {
        if !text.isEmpty, text.allSatisfy(\.isASCII), text.allSatisfy(\.isNumber) {
            guard let job = Int64(text), job >= 1 else { throw ValidationError("'\(text)' is not a job id (1 or more).") }
            self = .job(job)
            return
        }
        guard !text.isEmpty else { throw ValidationError("Give a job id (a number) or a song.") }
        self = .song(text)
    }
}
