import Foundation
import TactusModel
import TactusPlot
import TactusProtocol

/// The library page (`/`): every song, newest first, or those in a tempo range; the
/// histogram of their tempi; sortable columns; paging.
struct LibraryPage {
    var parameters: QueryParameters
    var query: QueryRequest
    var songs: [TempoMatch]
    /// The tempi of (up to ``histogramLimit``) songs of the search, for the histogram.
    var histogram: [TempoMatch]
    var detectors: [String]

    static let pageSize = 50
    static let histogramLimit = 5000

    /// The query of the page: the protocol's, `newest` first by default, 50 a page.
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
        return try LibraryRequests.query(QueryParameters(values: values), defaultLimit: pageSize)
    }

    /// The histogram's query: the same songs, slowest first, up to ``histogramLimit``.
    static func histogramQuery(_ query: QueryRequest) -> QueryRequest {
        var histogram = query
        histogram.order = "bpm"
        histogram.offset = 0
        histogram.limit = histogramLimit
        return histogram
    }

    func html() -> String {
        let minBpm = parameters.text("min_bpm") ?? ""
        let maxBpm = parameters.text("max_bpm") ?? ""
        let source = parameters.text("source") ?? (query.detector ?? (query.agree != nil ? "agree" : "consensus"))
        let sourceOptions = (["consensus"] + detectors + ["agree"]).map { value in
            let label = value == "consensus" ? "Consensus of the detectors" : value == "agree" ? "Songs the detectors agree on" : value
            return "<option value=\"\(HTML.escape(value))\"\(value == source ? " selected" : "")>\(HTML.escape(label))</option>"
        }.joined()
        let order = query.order ?? "newest"
        let orders = [("newest", "Newest first"), ("closeness", "Closest to the range's centre"), ("bpm", "Slowest first")]
            .map { "<option value=\"\($0.0)\"\($0.0 == order ? " selected" : "")>\($0.1)</option>" }.joined()
        let offset = query.offset ?? 0
        let limit = query.limit ?? Self.pageSize
        let ranged = query.minBpm > LibraryRequests.allBPM.lowerBound || query.maxBpm < LibraryRequests.allBPM.upperBound
        let heading = ranged
            ? "Songs at \(HTML.number(query.minBpm))–\(HTML.number(query.maxBpm)) BPM\(query.octave == true ? " (or half or double)" : "")"
            : "All songs"
        let rows = songs.map(row).joined(separator: "\n")
        let first = songs.isEmpty ? 0 : offset + 1
        let last = offset + songs.count
        func page(_ newOffset: Int) -> String {
            var values = parameters.values
            values["offset"] = String(newOffset)
            return "/" + HTML.query(values.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
        }
        let previous = offset > 0 ? "<a class=\"button secondary\" href=\"\(HTML.escape(page(max(0, offset - limit))))\" rel=\"prev\">← Previous</a>" : ""
        let next = songs.count == limit ? "<a class=\"button secondary\" href=\"\(HTML.escape(page(offset + limit)))\" rel=\"next\">Next →</a>" : ""
        let table = songs.isEmpty
            ? "<p class=\"muted\">\(ranged ? "No song of the library has a tempo in this range." : "The library is empty: upload songs on the <a href=\"/queue\">Queue</a> page, or with <code>tactus submit</code>.")</p>"
            : """
            <div class="table-wrap"><table class="cards sortable" id="songs">
            <caption class="muted" style="text-align:left;padding:6px 10px">Songs \(first)–\(last)\(order == "newest" ? ", newest first" : order == "bpm" ? ", slowest first" : ", closest to \(HTML.number((query.minBpm + query.maxBpm) / 2)) BPM first"). Column buttons sort this page.</caption>
            <thead><tr>
            <th scope="col"><button class="sort" type="button" data-key="title">Title</button></th>
            <th scope="col"><button class="sort" type="button" data-key="artist">Artist</button></th>
            <th scope="col" class="num"><button class="sort" type="button" data-key="bpm" data-type="number">Tempo (BPM)</button></th>
            <th scope="col" class="num"><button class="sort" type="button" data-key="confidence" data-type="number">Confidence</button></th>
            <th scope="col" class="num"><button class="sort" type="button" data-key="agreement" data-type="number">Agreement</button></th>
            <th scope="col" class="num"><button class="sort" type="button" data-key="duration" data-type="number">Duration</button></th>
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
            <button type="submit">Search</button>
            <a class="button secondary" href="/">Reset</a>
            </form>
            \(histogramHTML())
            \(table)
            <div class="pager">\(previous)\(next)</div>
            """
        return Page.document(title: heading, section: .library, body: body, script: Self.sortScript)
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
            <tr data-title="\(HTML.escape(title.lowercased()))" data-artist="\(HTML.escape((match.artist ?? "").lowercased()))" \
            data-bpm="\(match.bpm)" data-confidence="\(match.confidence ?? -1)" data-agreement="\(match.detectors.count)" \
            data-duration="\(match.durationS)">
            <td class="lead"><a class="title" href="/songs/\(id)">\(HTML.escape(title))</a>\(match.title == nil ? "" : "<div class=\"file\">\(HTML.escape(match.file))</div>")</td>
            <td data-label="Artist"\(match.artist?.isEmpty == false ? "" : " class=\"empty\"")>\(HTML.escape(match.artist ?? "–"))</td>
            <td class="num" data-label="Tempo (BPM)">\(tempo)</td>
            <td class="num" data-label="Confidence">\(HTML.percent(match.confidence))</td>
            <td class="num" data-label="Detectors agreeing">\(agreement)</td>
            <td class="num" data-label="Duration">\(Clock.text(match.durationS))</td>
            </tr>
            """
    }

    /// Bars of the tempi in bins of 5 BPM (or wider when the range is wide); each bar links
    /// to the search narrowed to its bin.
    private func histogramHTML() -> String {
        let tempi = histogram.map(\.matchedBPM).filter(\.isFinite)
        guard let lowest = tempi.min(), let highest = tempi.max() else { return "" }
        let span = max(highest - lowest, 1)
        let width = [1.0, 2, 5, 10, 20, 50, 100].first { span / $0 <= 40 } ?? 100
        let first = (lowest / width).rounded(.down)
        let count = Int((highest / width).rounded(.down) - first) + 1
        var bins = [Int](repeating: 0, count: count)
        for bpm in tempi { bins[min(count - 1, Int((bpm / width).rounded(.down) - first))] += 1 }
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
        let capped = histogram.count >= Self.histogramLimit
            ? " (only the \(Self.histogramLimit) slowest matches: narrow the range to see all of it)" : ""
        return """
            <figure class="histogram" aria-label="Tempo histogram">
            <svg viewBox="0 0 \(Int(chartWidth)) \(Int(chartHeight))" role="img" aria-labelledby="histogram-caption">
            \(peakLabel)
            <line x1="\(left)" y1="\(chartHeight - bottom)" x2="\(chartWidth - 8)" y2="\(chartHeight - bottom)" stroke="#9aa3b2"/>
            \(bars)\(ticks)</svg>
            <figcaption id="histogram-caption" class="hint">Tempo histogram of \(tempi.count) song\(tempi.count == 1 ? "" : "s")\(capped), \
            bins of \(HTML.number(width)) BPM\(query.octave == true ? " (tempi as matched: half or double counted at the range's tempo)" : ""). \
            Select a bar to search its range.</figcaption>
            </figure>
            """
    }

    /// Sorts the rows of a table by the column whose button is pressed (again: the other way);
    /// shows the agreement field only when the tempo source is the detectors' agreement.
    static let sortScript = """
        (function(){
          var source = document.querySelector('select[name=source]'), agree = document.getElementById('agree-field');
          if (!source || !agree) return;
          function show(){ var on = source.value === 'agree'; agree.hidden = !on; agree.querySelector('input').disabled = !on; }
          source.addEventListener('change', show); show();
        })();
        document.querySelectorAll('table.sortable').forEach(function(table){
          table.querySelectorAll('button.sort').forEach(function(button){
            button.addEventListener('click', function(){
              var th = button.parentElement, key = button.dataset.key, numeric = button.dataset.type === 'number';
              var ascending = th.getAttribute('aria-sort') !== 'ascending';
              table.querySelectorAll('th').forEach(function(other){ other.removeAttribute('aria-sort'); });
              th.setAttribute('aria-sort', ascending ? 'ascending' : 'descending');
              var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
              rows.sort(function(a, b){
                var x = a.dataset[key] || '', y = b.dataset[key] || '';
                var order = numeric ? (parseFloat(x) || 0) - (parseFloat(y) || 0) : x.localeCompare(y);
                return ascending ? order : -order;
              });
              rows.forEach(function(row){ body.appendChild(row); });
            });
          });
        });
        """
}
