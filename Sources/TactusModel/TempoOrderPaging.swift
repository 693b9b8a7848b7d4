/// Every song of a tempo range read a page at a time in tempo order, each once, while the
/// library may change between pages (a scan adding songs, a song analysed again or removed).
///
/// Pages by offset would shift under such changes: a song added below the pages read so far
/// pushes the next page's first song back into the last one (it comes twice), a song removed
/// pulls one forward past the page boundary (it never comes). So each page starts instead at
/// the tempo where the last one ended (the query's lower bound), skipping only the songs of
/// exactly that tempo already read (ties come in the order songs entered the library), and
/// any song read twice all the same is kept once. A song added or moved below the tempo read
/// so far is not in the result: it was not there when that part was read.
///
/// ```swift
/// var paging = TempoOrderPaging(from: range.lowerBound, pageSize: 2_000)
/// while !paging.isComplete {
///     paging.take(try library.query(/* lower bound paging.lower, offset paging.skip */))
/// }
/// ```
public struct TempoOrderPaging: Sendable {
    /// The songs asked for a page; a shorter page is the last.
    public private(set) var pageSize: Int
    /// The lower bound of the tempo range for the next page.
    public private(set) var lower: Double
    /// The offset of the next page: the songs at exactly ``lower`` already read.
    public private(set) var skip = 0
    /// The songs read so far, each once, in tempo order.
    public private(set) var songs: [TempoMatch] = []
    /// True once a page shorter than ``pageSize`` has come.
    public private(set) var isComplete = false
    private var seen: Set<SongID> = []

    /// Paging from tempo `lower` (the range's lower bound), `pageSize` songs (at least 1) a page.
    public init(from lower: Double, pageSize: Int) {
        precondition(pageSize > 0)
        self.lower = lower
        self.pageSize = pageSize
    }

    /// Asks for half as many songs a page from now on (a page of long titles and paths may be
    /// more than a reply may carry); false when a page is one song already.
    public mutating func halvePage() -> Bool {
        guard pageSize > 1 else { return false }
        pageSize /= 2
        return true
    }

    /// Takes the page asked with ``lower`` and ``skip`` (the songs ordered by tempo, ascending).
    /// A full page that brings no new song, or ends below ``lower``, ends the paging: a server
    /// answering so would otherwise be asked forever.
    public mutating func take(_ page: [TempoMatch]) {
        let before = songs.count
        for song in page where seen.insert(song.song).inserted {
            songs.append(song)
        }
        guard page.count >= pageSize, songs.count > before, let last = page.last?.bpm, last.isFinite, last >= lower else {
            isComplete = true
            return
        }
        let tied = page.reversed().prefix { $0.bpm == last }.count
        if last == lower {
            skip += tied
        } else {
            lower = last
            skip = tied
        }
    }
}
