import Foundation
import TactusDetector
import TactusModel
import TactusPlot
import TactusProtocol

/// A song's page (`/songs/SHA256`): the song figure, every detector's tempo, confidence and
/// candidates, the per-window tempi, the consensus and the reference tempo.
struct SongPage {
    var figure: SongFigureSource.Figure

    func html() -> String {
        let song = figure.comparison
        let id = song.song.hex
        let title = SongPlot.title(title: song.title, artist: song.artist, file: song.file)
        let consensus = song.consensus
        let reference = song.reference.map { "\(HTML.number($0.bpm)) <span class=\"muted\">(\(HTML.escape($0.source)))</span>" } ?? "none"
        let stats = """
            <div class="summary">
            <div class="stat"><b>\(HTML.number(consensus.bpm))</b><span>BPM, consensus\(song.consensusRelation.map { " · " + relation($0) } ?? "")</span></div>
            <div class="stat"><b>\(HTML.percent(consensus.confidence))</b><span>confidence</span></div>
            <div class="stat"><b>\(consensus.detectors.count) of \(song.results.filter { $0.status == .done }.count)</b><span>detectors agree</span></div>
            <div class="stat"><b>\(reference)</b><span>reference tempo</span></div>
            <div class="stat"><b>\(Clock.text(song.durationS))</b><span>duration</span></div>
            </div>
            """
        let rows = song.results.map { result in
            let candidates = result.candidates.map { "\(HTML.number($0.bpm)) <span class=\"muted\">(\(HTML.number($0.strength, digits: 2)))</span>" }
                .joined(separator: ", ")
            let status = result.failure.map { "<span class=\"pill failed\">failed</span> \(HTML.escape($0.code.rawValue)): \(HTML.escape($0.message))" }
                ?? "<span class=\"pill \(result.status.rawValue)\">\(HTML.escape(result.status.rawValue))</span>"
            return """
                <tr><td class="lead"><b>\(HTML.escape(result.label))</b> <span class="muted">v\(HTML.escape(result.version))</span></td>
                <td class="num" data-label="Tempo (BPM)">\(HTML.number(result.bpm))\(result.relation.map { " " + relation($0) } ?? "")</td>
                <td class="num" data-label="Confidence">\(HTML.percent(result.confidence))</td>
                <td data-label="Candidates">\(candidates.isEmpty ? "–" : candidates)</td>
                <td data-label="Status">\(status)</td>
                <td class="num" data-label="Analysis time">\(HTML.number(result.seconds, digits: 2)) s</td></tr>
                """
        }.joined(separator: "\n")
        let windows = figure.result.analyses.map { analysis in
            let cells = analysis.windows.map { window in
                "<tr><td class=\"num\">\(Clock.text(window.startS))</td><td class=\"num\">\(HTML.number(window.bpm))</td>"
                    + "<td class=\"num\">\(HTML.number(window.strength, digits: 2))</td><td class=\"num\">\(HTML.number(window.energy, digits: 3))</td></tr>"
            }.joined()
            return """
                <details><summary>\(HTML.escape(analysis.detector)): \(analysis.windows.count) window\(analysis.windows.count == 1 ? "" : "s")</summary>
                <div class="table-wrap"><table><thead><tr><th class="num">Start</th><th class="num">Tempo (BPM)</th><th class="num">Strength</th><th class="num">Energy</th></tr></thead>
                <tbody>\(cells)</tbody></table></div></details>
                """
        }.joined(separator: "\n")
        let svg = figure.svg.components(separatedBy: "\n").drop { $0.hasPrefix("<?xml") }.joined(separator: "\n")
        let pending = figure.result.pending.isEmpty ? "" :
            "<p class=\"hint\">Still being analysed by \(HTML.escape(figure.result.pending.joined(separator: ", "))): reload the page later.</p>"
        let body = """
            <p class="muted"><a href="/">Library</a> › song \(id.prefix(12))</p>
            <h1>\(HTML.escape(title))</h1>
            <p class="file">\(title == song.file ? "" : HTML.escape(song.file) + " · ")<span class="code">\(id)</span></p>
            \(stats)
            \(pending)
            <h2>Detectors</h2>
            <div class="table-wrap"><table class="cards">
            <thead><tr><th>Detector</th><th class="num">Tempo (BPM)</th><th class="num">Confidence</th><th>Candidates (strength)</th><th>Status</th><th class="num">Time</th></tr></thead>
            <tbody>\(rows)</tbody></table></div>
            <h2>Figure</h2>
            <p class="hint">The energy envelope, each detector's tempo per analysis window and its candidates. \
            <a href="/api/v1/songs/\(id)/figure.svg" download="\(id.prefix(12)).svg">Download the SVG</a> · \
            <a href="/api/v1/songs/\(id)">JSON</a></p>
            <div class="figure" tabindex="0" aria-label="Song figure (scrolls sideways on a narrow screen)">\(svg)</div>
            <h2>Per-window tempi</h2>
            \(windows.isEmpty ? "<p class=\"muted\">No analysis stored yet.</p>" : windows)
            """
        return Page.document(title: title, section: .library, body: body)
    }

    private func relation(_ relation: ReferenceRelation) -> String {
        let text: String
        switch relation {
        case .match: text = "matches the reference"
        case .octave: text = "octave of the reference"
        case .triple: text = "third or triple of the reference"
        case .wrong: text = "wrong"
        }
        return "<span class=\"pill \(relation.rawValue)\">\(text)</span>"
    }
}
