import Foundation

/// Turns the raw bytes of tag fields into clean, valid UTF-8 text.
enum TagText {
    /// Bytes that should be UTF-8: kept when valid; otherwise read as Latin-1 (the usual
    /// encoding of tags that are not UTF-8: ID3v1, RIFF INFO chunks), so every byte becomes a
    /// character instead of being lost. NULs separate multiple values, joined with "; ".
    /// Returns nil for empty or blank text.
    static func clean<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String? {
        let values = bytes.split(separator: 0).compactMap { part -> String? in
            let text = String(validating: part, as: UTF8.self) ?? String(decoding: part.map { UInt16($0) }, as: UTF16.self)
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            return trimmed.isEmpty ? nil : trimmed
        }
        return values.isEmpty ? nil : values.joined(separator: "; ")
    }

    /// Text known to be Latin-1 (ID3v1 fields).
    static func latin1<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String? {
        let field = bytes.prefix { $0 != 0 }
        let text = String(decoding: field.map { UInt16($0) }, as: UTF16.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? nil : text
    }

    /// Repairs UTF-8 that was stored as Latin-1 (a common tagger mistake, and what LAME
    /// writes when given UTF-8): when every character of `text` is a Latin-1 byte, some are
    /// beyond ASCII, and those bytes form valid UTF-8 with multi-byte sequences, the UTF-8
    /// reading is returned. Genuine Latin-1 text almost never forms valid UTF-8 ("Ã©" pairs).
    static func repairingMojibake(_ text: String?) -> String? {
        guard let text else { return nil }
        let scalars = text.unicodeScalars
        guard scalars.allSatisfy({ $0.value <= 0xFF }), scalars.contains(where: { $0.value >= 0x80 }) else { return text }
        let bytes = scalars.map { UInt8($0.value) }
        return String(validating: bytes, as: UTF8.self) ?? text
    }

    /// The year at the start of a date ("2019", "2019-03-01"), if plausible.
    static func year(_ text: String?) -> Int? {
        guard let text else { return nil }
        let digits = text.drop { !$0.isNumber }.prefix(4)
        guard digits.count == 4, let year = Int(digits), (1000...9999).contains(year) else { return nil }
        return year
    }

    /// An ID3 genre: "(17)", "17" and "(17)Rock" become the name of genre 17 ("Rock");
    /// names are kept as they are.
    static func id3Genre(_ text: String?) -> String? {
        guard var text else { return nil }
        if text.hasPrefix("("), let close = text.firstIndex(of: ")") {
            let number = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            if !rest.isEmpty { return String(rest) }
            text = String(number)
        }
        if let index = Int(text) {
            return id3v1GenreName(index)
        }
        return text
    }

    /// The name of an ID3v1 genre index (the 80 genres of the ID3v1 specification).
    static func id3v1GenreName(_ index: Int) -> String? {
        id3v1Genres.indices.contains(index) ? id3v1Genres[index] : nil
    }

    private static let id3v1Genres = [
        "Blues", "Classic Rock", "Country", "Dance", "Disco", "Funk", "Grunge", "Hip-Hop", "Jazz",
        "Metal", "New Age", "Oldies", "Other", "Pop", "R&B", "Rap", "Reggae", "Rock", "Techno",
        "Industrial", "Alternative", "Ska", "Death Metal", "Pranks", "Soundtrack", "Euro-Techno",
        "Ambient", "Trip-Hop", "Vocal", "Jazz+Funk", "Fusion", "Trance", "Classical", "Instrumental",
        "Acid", "House", "Game", "Sound Clip", "Gospel", "Noise", "AlternRock", "Bass", "Soul",
        "Punk", "Space", "Meditative", "Instrumental Pop", "Instrumental Rock", "Ethnic", "Gothic",
        "Darkwave", "Techno-Industrial", "Electronic", "Pop-Folk", "Eurodance", "Dream",
        "Southern Rock", "Comedy", "Cult", "Gangsta", "Top 40", "Christian Rap", "Pop/Funk",
        "Jungle", "Native American", "Cabaret", "New Wave", "Psychadelic", "Rave", "Showtunes",
        "Trailer", "Lo-Fi", "Tribal", "Acid Punk", "Acid Jazz", "Polka", "Retro", "Musical",
        "Rock & Roll", "Hard Rock",
    ]
}
