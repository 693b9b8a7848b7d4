import Foundation
import TactusModel
import TactusPlot
import TactusProtocol

/// The library page (`/`): every song, newest first, or those in a tempo range; the
/// histogram of all of them; columns sorted over the whole search by the store; paging.
struct LibraryPage {
    var parameters: QueryParameters
    var query: QueryRequest
    /// This page's songs, and the histogram of every song of the search in 1-BPM bins.
    var answer: SongList
    var detectors: [String]

    var songs: [TempoMatch] { answer.songs }

    static let pageSize = 50
    /// The histogram the page asks the store for; its bars merge these bins.
    static let histogramBinWidth = 1.0

    /// The query of the page: the protocol's, `newest` first by default, 50 a page, with the
    /// histogram of every match.
    static func query(_ parameters: QueryParameters) throws(HTTPFailure) -> QueryRequest {
        var values = parameters.values
        if values["order"]?.isEmpty ?? true {
            let ranged = !(values["min_bpm"]?.isEmpty ?? true) || !(values["max_bpm"]?.isEmpty ?? true)
            values["order"] = ranged ? "closeness" : "newest"
        }
        if values["source"] == "agree" { values["detector"] = nil } else {
            values["agree"] = nil
            if let source = values["source"], source != "consensus" { values["detector"] = source }
        }
        // A detector's tempo has no agreement to sort by: its column is not sortable then.
        if values["detector"] != nil && values["order"] == TempoOrder.agreement.rawValue { values["order"] = "closeness" }
        values["histogram"] = HTML.number(histogramBinWidth)
        return try LibraryRequests.query(QueryParameters(values: values), defaultLimit: pageSize)
    }

    /// The columns sorted by the store, with the order each stands for; the first press sorts
    /// confidence and agreement highest first, the others lowest (A) first.
    static let columns: [(key: String, label: String, order: TempoOrder, numeric: Bool)] = [
        ("title", "Title", .title, false), ("artist", "Artist", .artist, false), ("bpm", "Tempo (BPM)", .bpm, true),
        ("confidence", "Confidence", .confidence, true), ("agreement", "Agreement", .agreement, true),
        ("duration", "Duration", .duration, true),
    ]

    /// How an order reads in the caption, each way.
    static func describe(_ order: TempoOrder, descending: Bool, centre: Double) -> String {
        switch (order, descending) {
        case (.newest, false): "newest first"
        case (.newest, true): "oldest first"
        case (.closeness, false): "closest to \(HTML.number(centre)) BPM first"
        case (.closeness, true): "farthest from \(HTML.number(centre)) BPM first"
        case (.bpm, false): "slowest first"
        case (.bpm, true): "fastest first"
        case (.title, false): "by title, A to Z"
        case (.title, true): "by title, Z to A"
        case (.artist, false): "by artist, A to Z"
        case (.artist, true): "by artist, Z to A"
        case (.duration, false): "shortest first"
        case (.duration, true): "longest first"
        case (.confidence, false): "least sure first"
        case (.confidence, true): "surest first"
        case (.agreement, false): "fewest detectors agreeing first"
        case (.agreement, true): "most detectors agreeing first"
        }
    }

    func html() -> String {
        let minBpm = parameters.text("min_bpm") ?? ""
        let maxBpm = parameters.text("max_bpm") ?? ""
        let source = parameters.text("source") ?? (query.detector ?? (query.agree != nil ? "agree" : "consensus"))
        let sourceOptions = (["consensus"] + detectors + ["agree"]).map { value in
            let label = value == "consensus" ? "Consensus of the detectors" : value == "agree" ? "Songs the detectors agree on" : value
            return "<option value=\"\(HTML.escape(value))\"\(value == source ? " selected" : "")>\(HTML.escape(label))</option>"
        }.joined()
        let order = query.order.flatMap(TempoOrder.init(rawValue:)) ?? .newest
        let descending = query.descending ?? false
        let fromDetector = query.detector != nil
        let orders = TempoOrder.allCases.filter { !(fromDetector && $0 == .agreement) }.map { value in
            let label: String = switch value {
            case .closeness: "Closeness to the range's centre"
            case .bpm: "Tempo"
            case .newest: "Newest"
            case .agreement: "Detectors agreeing"
            default: value.rawValue.prefix(1).uppercased() + value.rawValue.dropFirst()
            }
            return "<option value=\"\(value.rawValue)\"\(value == order ? " selected" : "")>\(label)</option>"
        }.joined()
        let offset = query.offset ?? 0
        let limit = query.limit ?? Self.pageSize
        let ranged = query.minBpm > LibraryRequests.allBPM.lowerBound || query.maxBpm < LibraryRequests.allBPM.upperBound
        let heading = ranged
            ? "Songs at \(HTML.number(query.minBpm))–\(HTML.number(query.maxBpm)) BPM\(query.octave == true ? " (or half or double)" : "")"
            : "All songs"
        let rows = songs.map(row).joined(separator: "\n")
        let first = songs.isEmpty ? 0 : offset + 1
        let last = offset + songs.count
        let total = answer.histogram?.total
        /// This search with other values (nil removes one), as a link.
        func link(_ changes: [String: String?]) -> String {
            var values = parameters.values
            for (name, value) in changes { values[name] = value }
            values = values.filter { !$0.value.isEmpty }
            return "/" + HTML.query(values.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
        }
        func page(_ newOffset: Int) -> String { link(["offset": newOffset == 0 ? nil : String(newOffset)]) }
        let hasNext = total.map { offset + limit < $0 } ?? (songs.count == limit)
        let previous = offset > 0 ? "<a class=\"button secondary\" href=\"\(HTML.escape(page(max(0, offset - limit))))\" rel=\"prev\">← Previous</a>" : ""
        let next = hasNext ? "<a class=\"button secondary\" href=\"\(HTML.escape(page(offset + limit)))\" rel=\"next\">Next →</a>" : ""
        let firstPage = offset > limit ? "<a class=\"button secondary\" href=\"\(HTML.escape(page(0)))\">First</a>" : ""
        let lastOffset = total.map { max(0, ($0 - 1) / limit * limit) }
        let lastPage = lastOffset.map { $0 > offset + limit ? "<a class=\"button secondary\" href=\"\(HTML.escape(page($0)))\">Last</a>" : "" } ?? ""
        let pageNumber = total.map { total in
            "<span class=\"muted\">Page \(offset / max(limit, 1) + 1) of \(max(1, (total + limit - 1) / max(limit, 1)))</span>"
        } ?? ""
        let headers = Self.columns.map { column -> String in
            let numeric = column.numeric ? " class=\"num\"" : ""
            if fromDetector && column.order == .agreement { return "<th scope=\"col\"\(numeric)>\(column.label)</th>" }
            let current = column.order == order
            // Pressed again, a column sorts the other way; first, the surest and most agreed come first.
            let nextDescending = current ? !descending : [.confidence, .agreement].contains(column.order)
            let href = link(["order": column.order.rawValue, "descending": nextDescending ? "true" : nil, "offset": nil])
            let sort = current ? " aria-sort=\"\(descending ? "descending" : "ascending")\"" : ""
            let hint = "Sort every song of the search \(Self.describe(column.order, descending: nextDescending, centre: 0))"
            return "<th scope=\"col\"\(numeric)\(sort)><a class=\"sort\" href=\"\(HTML.escape(href))\" title=\"\(HTML.escape(hint))\">\(column.label)</a></th>"
        }.joined(separator: "\n")
        let counted = total.map { " of \(HTML.count($0))" } ?? ""
        let exportLink = "/api/v1/export/rekordbox.xml"
            + (ranged ? HTML.query([("min_bpm", HTML.number(query.minBpm)), ("max_bpm", HTML.number(query.maxBpm))]) : "")
        let table = songs.isEmpty
            ? "<p class=\"muted\">\(offset > 0 && (total ?? 0) > 0 ? "No songs on this page: <a href=\"\(HTML.escape(page(0)))\">back to the first page</a>." : ranged ? "No song of the library has a tempo in this range." : "The library is empty: upload songs on the <a href=\"/queue\">Queue</a> page, or with <code>tactus submit</code>.")</p>"
            : """
            <div class="table-wrap"><table class="cards sortable" id="songs">
            <caption class="muted">Songs \(first)–\(last)\(counted), \(Self.describe(order, descending: descending, centre: (query.minBpm + query.maxBpm) / 2)). \
            <span class="wide">Select a column's name to sort them all by it.</span></caption>
            <thead><tr>
            \(headers)
            </tr></thead>
            <tbody>
            \(rows)
            </tbody></table></div>
            """
        let body = """
            <h1>\(heading)</h1>
            <form class="filters" method="get" action="/" role="search" aria-label="Tempo search">
            <label>From BPM<input type="number" name="min_bpm" min="1" max="1000" step="any" value="\(HTML.escape(minBpm))" placeholder="1"></label>
            <label>To BPM<input type="number" name="max_bpm" min="1" max="1000" step="any" value="\(HTML.escape(maxBpm))" placeholder="1000"></label>
            <label>Tempo of<select name="source">\(sourceOptions)</select></label>
            <label id="agree-field">Detectors agreeing, at least<input type="number" name="agree" min="1" max="64" value="\(query.agree.map(String.init) ?? "2")"></label>
            <label class="check"><input type="checkbox" name="octave" value="true"\(query.octave == true ? " checked" : "")> Half or double tempo too</label>
            <label>Order<select name="order">\(orders)</select></label>
            <label class="check"><input type="checkbox" name="descending" value="true"\(descending ? " checked" : "")> Reversed</label>
            <button type="submit">Search</button>
            <a class="button secondary" href="/">Reset</a>
            </form>
            \(histogramHTML())
            \(table)
            <nav class="pager" aria-label="Pages">\(firstPage)\(previous)\(pageNumber)\(next)\(lastPage)</nav>
            <p class="muted"><a class="button secondary" href="\(HTML.escape(exportLink))" download="tactus-rekordbox.xml">Export for rekordbox</a> \
            every song \(ranged ? "of this tempo range (by the consensus tempo)" : "of the library") as a rekordbox XML collection, \
            with beat grids; songs that were uploaded have no path and are left out.</p>
            """
        return Page.document(title: heading, section: .library, body: body, script: Self.script)
    }

    private func row(_ match: TempoMatch) -> String {
        let id = match.song.hex
        let title = match.title.flatMap { $0.isEmpty ? nil : $0 } ?? match.file
        let tempo = match.factor == 1
            ? HTML.number(match.bpm)
            : "\(HTML.number(match.bpm)) <span class=\"muted\">(×\(HTML.number(1 / match.factor, digits: 1)) = \(HTML.number(match.matchedBPM)))</span>"
        let agreement = match.detector == "consensus" || match.detector == "agree"
            ? "<span title=\"\(HTML.escape(match.detectors.joined(separator: ", ")))\">\(match.detectors.count)</span>" : "–"
        return """
            <tr>
            <td class="lead"><a class="title" href="/songs/\(id)">\(HTML.escape(title))</a>\(match.title == nil ? "" : "<div class=\"file\">\(HTML.escape(match.file))</div>")</td>
            <td data-label="Artist"\(match.artist?.isEmpty == false ? "" : " class=\"empty\"")>\(HTML.escape(match.artist ?? "–"))</td>
            <td class="num" data-label="Tempo (BPM)">\(tempo)</td>
            <td class="num" data-label="Confidence">\(HTML.percent(match.confidence))</td>
            <td class="num" data-label="Detectors agreeing">\(agreement)</td>
            <td class="num" data-label="Duration">\(Clock.text(match.durationS))</td>
            </tr>
            """
    }

    /// Bars of the tempi of every song of the search, in bins of 1 BPM (or wider when the range
    /// is wide: the store's 1-BPM bins merged); each bar links to the search narrowed to its bin.
    private func histogramHTML() -> String {
        guard let histogram = answer.histogram, histogram.total > 0,
            let lowest = histogram.bins.first(where: { $0.count > 0 })?.lower,
            let highest = histogram.bins.last(where: { $0.count > 0 })?.lower
        else { return "" }
        let span = max(highest + Self.histogramBinWidth - lowest, 1)
        let width = [1.0, 2, 5, 10, 20, 50, 100].first { span / $0 <= 40 } ?? 100
        let first = (lowest / width).rounded(.down)
        let count = Int((highest / width).rounded(.down) - first) + 1
        var bins = [Int](repeating: 0, count: count)
        for bin in histogram.bins where bin.count > 0 {
            bins[min(count - 1, max(0, Int((bin.lower / width).rounded(.down) - first)))] += bin.count
        }
        let tempiCount = histogram.total
        let peak = Double(bins.max() ?? 1)
        let (chartWidth, chartHeight, left, bottom) = (800.0, 150.0, 44.0, 24.0)
        let barWidth = (chartWidth - left - 8) / Double(count)
        var bars = ""
        for (index, binCount) in bins.enumerated() where binCount > 0 {
            let lower = (first + Double(index)) * width
            let height = max((chartHeight - bottom - 10) * Double(binCount) / peak, 2)
            let x = left + Double(index) * barWidth
            var values = parameters.values
            values["min_bpm"] = HTML.number(lower, digits: 2)
            values["max_bpm"] = HTML.number(lower + width - 0.01, digits: 2)
            values["offset"] = nil
            if values["order"] == "newest" || values["order"] == nil { values["order"] = "closeness" }
            let link = "/" + HTML.query(values.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
            let label = "\(HTML.number(lower))–\(HTML.number(lower + width)) BPM: \(binCount) song\(binCount == 1 ? "" : "s")"
            bars += "<a href=\"\(HTML.escape(link))\" aria-label=\"\(label)\"><title>\(label)</title>"
                + "<rect x=\"\(SVGNumber.format(x + 1))\" y=\"\(SVGNumber.format(chartHeight - bottom - height))\" "
                + "width=\"\(SVGNumber.format(max(barWidth - 2, 1)))\" height=\"\(SVGNumber.format(height))\" rx=\"2\"/></a>"
        }
        // Ticks at round tempi: every 10 BPM, or 20, 50, 100 when the range is wide.
        var ticks = ""
        let lowestEdge = first * width
        let highestEdge = (first + Double(count)) * width
        let tickStep = [5.0, 10, 20, 50, 100, 200].first { (highestEdge - lowestEdge) / $0 <= 10 } ?? 200
        var tick = (lowestEdge / tickStep).rounded(.up) * tickStep
        while tick <= highestEdge {
            let x = left + (tick - lowestEdge) / width * barWidth
            ticks += "<line x1=\"\(SVGNumber.format(x))\" y1=\"\(chartHeight - bottom)\" x2=\"\(SVGNumber.format(x))\" "
                + "y2=\"\(chartHeight - bottom + 4)\" stroke=\"#9aa3b2\"/>"
                + "<text x=\"\(SVGNumber.format(x))\" y=\"\(SVGNumber.format(chartHeight - 6))\" font-size=\"12\" text-anchor=\"middle\" "
                + "fill=\"#5b6475\">\(HTML.number(tick))</text>"
            tick += tickStep
        }
        let peakLabel = "<text x=\"\(left - 6)\" y=\"20\" font-size=\"12\" text-anchor=\"end\" fill=\"#5b6475\">\(Int(peak))</text>"
            + "<line x1=\"\(left - 3)\" y1=\"16\" x2=\"\(chartWidth - 8)\" y2=\"16\" stroke=\"#e3e7ee\" stroke-dasharray=\"3 3\"/>"
        return """
            <figure class="histogram" aria-label="Tempo histogram">
            <svg viewBox="0 0 \(Int(chartWidth)) \(Int(chartHeight))" role="img" aria-labelledby="histogram-caption">
            \(peakLabel)
            <line x1="\(left)" y1="\(chartHeight - bottom)" x2="\(chartWidth - 8)" y2="\(chartHeight - bottom)" stroke="#9aa3b2"/>
            \(bars)\(ticks)</svg>
            <figcaption id="histogram-caption" class="hint">Tempo histogram of \(tempiCount == 1 ? "the song" : "all \(HTML.count(tempiCount)) songs") of the search, \
            bins of \(HTML.number(width)) BPM\(query.octave == true ? " (tempi as matched: half or double counted at the range's tempo)" : ""). \
            Select a bar to search its range.</figcaption>
            </figure>
            """
    }

    /// Shows the agreement field only when the tempo source is the detectors' agreement.
    static let script = """
        (function(){
          var source = document.querySelector('select[name=source]'), agree = document.getElementById('agree-field');
          if (!source || !agree) return;
          function show(){ var on = source.value === 'agree'; agree.hidden = !on; agree.querySelector('input').disabled = !on; }
          source.addEventListener('change', show); show();
        })();
        """
}
