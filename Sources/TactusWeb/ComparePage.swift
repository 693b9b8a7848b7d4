import Foundation
import TactusModel

/// The compare page (`/compare`): how often each pair of detectors agrees, each detector's
/// (and the consensus') accuracy against the reference tempi, and the songs to check.
struct ComparePage {
    var library: LibraryComparison

    func html() -> String {
        let labels = Array(Set(library.agreements.flatMap { [$0.first, $0.second] })).sorted()
        var cells: [String: LibraryComparison.Agreement] = [:]
        for agreement in library.agreements {
            cells["\(agreement.first)|\(agreement.second)"] = agreement
            cells["\(agreement.second)|\(agreement.first)"] = agreement
        }
        let header = labels.map { "<th scope=\"col\" class=\"num\">\(HTML.escape($0))</th>" }.joined()
        let matrixRows = labels.map { row in
            let values = labels.map { column -> String in
                guard row != column else { return "<td class=\"num muted\">–</td>" }
                guard let agreement = cells["\(row)|\(column)"] else { return "<td class=\"num muted\">no songs</td>" }
                return "<td class=\"num\" title=\"\(agreement.songs) songs both found a tempo for\">\(HTML.percent(agreement.agree))"
                    + " <span class=\"muted\">(\(HTML.percent(agreement.agreeOctave)) with octaves)</span></td>"
            }.joined()
            return "<tr><th scope=\"row\">\(HTML.escape(row))</th>\(values)</tr>"
        }.joined(separator: "\n")
        let matrix = labels.count < 2
            ? "<p class=\"muted\">Agreement needs songs analysed by at least two detectors.</p>"
            : """
            <div class="table-wrap"><table><thead><tr><th></th>\(header)</tr></thead><tbody>\(matrixRows)</tbody></table></div>
            <p class="hint">Share of the songs both detectors found a tempo for on which they agree within 4 %; in brackets, also counting half or double.</p>
            """
        let accuracyRows = library.accuracy.map { row in
            """
            <tr><td class="lead"><b>\(HTML.escape(row.detector))</b></td><td class="num" data-label="Songs with a reference">\(row.count)</td>
            <td class="num" data-label="Acc1">\(HTML.percent(row.acc1))</td><td class="num" data-label="Acc2">\(HTML.percent(row.acc2))</td>
            <td class="num" data-label="Mean error">\(row.meanAbsoluteError.map { HTML.number($0, digits: 2) + " BPM" } ?? "–")</td></tr>
            """
        }.joined(separator: "\n")
        let accuracy = library.accuracy.isEmpty
            ? "<p class=\"muted\">No song has a reference tempo yet: set one with <code>tactus truth set SONG BPM</code> or import a CSV with <code>tactus truth import</code>.</p>"
            : """
            <div class="table-wrap"><table class="cards"><thead><tr><th>Detector</th><th class="num">Songs</th><th class="num">Acc1</th><th class="num">Acc2</th><th class="num">Mean error</th></tr></thead>
            <tbody>\(accuracyRows)</tbody></table></div>
            <p class="hint">Acc1: share within 4 % of the reference tempo. Acc2: also counting half, double, a third and triple.</p>
            """
        let checkRows = library.toCheck.map { song in
            let tempi = song.tempi.map { "\(HTML.escape($0.detector)) \(HTML.number($0.bpm))" }.joined(separator: " · ")
            let reasons = song.reasons.map { "<span class=\"pill \($0 == "disagree" ? "wrong" : "octave")\">\(HTML.escape($0))</span>" }.joined()
            return """
                <tr><td class="lead"><a href="/songs/\(song.song.hex)">\(HTML.escape(song.file))</a></td>
                <td class="num" data-label="Consensus">\(HTML.number(song.consensus.bpm)) <span class="muted">(\(HTML.percent(song.consensus.confidence)))</span></td>
                <td data-label="Detectors">\(tempi)</td><td data-label="Why">\(reasons)</td></tr>
                """
        }.joined(separator: "\n")
        let toCheck = library.toCheck.isEmpty
            ? "<p class=\"muted\">No song needs checking: the detectors agree on every song with a confident consensus.</p>"
            : """
            <div class="table-wrap"><table class="cards"><thead><tr><th>Song</th><th class="num">Consensus (confidence)</th><th>Detectors' tempi</th><th>Why</th></tr></thead>
            <tbody>\(checkRows)</tbody></table></div>
            \(library.toCheckTotal > library.toCheck.count ? "<p class=\"hint\">The \(library.toCheck.count) least confident of \(library.toCheckTotal) songs to check.</p>" : "")
            """
        let body = """
            <h1>How the detectors compare</h1>
            <div class="summary"><div class="stat"><b>\(library.songs)</b><span>songs in the library</span></div>
            <div class="stat"><b>\(library.toCheckTotal)</b><span>songs to check</span></div></div>
            <h2>Agreement between detectors</h2>
            \(matrix)
            <h2>Accuracy against the reference tempi</h2>
            \(accuracy)
            <h2>Songs to check</h2>
            <p class="hint">Songs where a detector disagrees with the consensus (more than 4 % apart), or the consensus is not confident; least confident first.</p>
            \(toCheck)
            """
        return Page.document(title: "Compare", section: .compare, body: body)
    }
}
