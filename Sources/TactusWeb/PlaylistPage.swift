import Foundation
import TactusModel
import TactusProtocol

/// The playlist page (`/playlist`): a cadence (or a profile of cadences) in, the songs to
/// run to out, downloadable as M3U8.
struct PlaylistPage {
    var parameters: QueryParameters
    var query: PlaylistQuery?
    var playlist: Playlist?
    var failure: HTTPFailure?
    var detectors: [String]

    func html() -> String {
        let cadence = parameters.text("cadence") ?? (query == nil ? "170" : "")
        let minutes = parameters.text("minutes") ?? "30"
        let profile = parameters.text("profile") ?? ""
        let tolerance = parameters.text("tolerance") ?? "0.04"
        let detector = parameters.text("detector") ?? ""
        let detectorOptions = ([""] + detectors).map { value in
            "<option value=\"\(HTML.escape(value))\"\(value == detector ? " selected" : "")>\(value.isEmpty ? "Consensus" : HTML.escape(value))</option>"
        }.joined()
        var result = ""
        if let failure {
            result = "<p class=\"error\" role=\"alert\">\(HTML.escape(failure.body.message))</p>"
        } else if let playlist, let query {
            var download = parameters.values.filter { ["cadence", "minutes", "profile", "tolerance", "detector"].contains($0.key) && !$0.value.isEmpty }
            if download["profile"] != nil { download["cadence"] = nil; download["minutes"] = nil }
            download["format"] = "m3u8"
            let link = "/api/v1/playlist" + HTML.query(download.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
            download["format"] = "json"
            let json = "/api/v1/playlist" + HTML.query(download.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
            let total = playlist.entries.last.map { $0.startS + $0.match.durationS } ?? 0
            let rows = playlist.entries.map { entry in
                let match = entry.match
                let title = match.title.flatMap { $0.isEmpty ? nil : $0 } ?? match.file
                let factor = match.factor == 1 ? "" : " <span class=\"muted\">(×\(HTML.number(1 / match.factor)))</span>"
                return """
                    <tr><td class="num" data-label="#">\(entry.position)</td><td class="num" data-label="Starts at">\(Clock.text(entry.startS))</td>
                    <td class="lead"><a class="title" href="/songs/\(match.song.hex)">\(HTML.escape(title))</a>\
                    \(match.artist.map { "<div class=\"file\">\(HTML.escape($0))</div>" } ?? "")</td>
                    <td class="num" data-label="Cadence">\(HTML.number(entry.cadence))</td>
                    <td class="num" data-label="Song tempo">\(HTML.number(match.bpm))\(factor)</td>
                    <td class="num" data-label="Duration">\(Clock.text(match.durationS))</td></tr>
                    """
            }.joined(separator: "\n")
            let fills = playlist.fills.map { fill in
                "<li>\(Clock.text(fill.segment.durationS)) at \(HTML.number(fill.segment.cadence)) steps/min: "
                    + "\(Clock.text(fill.filledS)) filled\(fill.isShort ? " <span class=\"pill wrong\">not enough songs</span>" : "")</li>"
            }.joined()
            let heading = query.profile.map { "Run \(HTML.escape($0))" } ?? "Run at \(HTML.number(query.cadence)) steps per minute"
            result = playlist.entries.isEmpty
                ? "<h2>\(heading)</h2><p class=\"muted\">No song of the library fits: try a wider tolerance, or half or double the cadence is counted already.</p>"
                : """
                <h2>\(heading)</h2>
                <p>\(playlist.entries.count) song\(playlist.entries.count == 1 ? "" : "s"), \(Clock.text(total)). \
                <a class="button" href="\(HTML.escape(link))" download>Download M3U8</a> \
                <a class="button secondary" href="\(HTML.escape(json))">JSON</a></p>
                \(Self.withoutPath(playlist))
                <ul class="hint">\(fills)</ul>
                <div class="table-wrap"><table class="cards"><thead><tr><th class="num">#</th><th class="num">Starts</th><th>Song</th>
                <th class="num">Cadence</th><th class="num">Song tempo</th><th class="num">Duration</th></tr></thead>
                <tbody>\(rows)</tbody></table></div>
                """
        }
        let body = """
            <h1>Playlist for a run</h1>
            <form class="filters" method="get" action="/playlist" aria-label="Cadence">
            <label>Cadence (steps/min)<input type="number" name="cadence" min="1" max="1000" step="any" value="\(HTML.escape(cadence))"></label>
            <label>Minutes<input type="number" name="minutes" min="0.01" step="any" value="\(HTML.escape(minutes))"></label>
            <label>or a profile<input type="text" name="profile" value="\(HTML.escape(profile))" placeholder="10m@150,5m@170" size="18"></label>
            <label>Tolerance<input type="number" name="tolerance" min="0.001" max="0.49" step="0.001" value="\(HTML.escape(tolerance))"></label>
            <label>Tempo of<select name="detector">\(detectorOptions)</select></label>
            <button type="submit">Build the playlist</button>
            </form>
            <p class="hint">A profile (durations with h, m or s, each at a cadence) replaces the cadence and minutes. \
            A song fits when its tempo, or half or double it, is within the tolerance of the cadence.</p>
            <form class="filters" id="follow" aria-label="Follow a workout">
            <label>or follow a workout<input type="file" name="workout" accept=".gpx,.tcx,.fit,.csv" required></label>
            <label>by<select name="by"><option value="cadence">cadence</option><option value="heart-rate">heart rate</option></select></label>
            <label>Max heart rate<input type="number" name="max_heart_rate" min="60" max="250" step="1" placeholder="the workout's"></label>
            <button type="submit">Follow it</button>
            </form>
            <p class="hint">A watch's GPX, TCX or FIT file (or a phone's accelerometer CSV): the server reads it, and each \
            stretch of steady cadence, or of one heart-rate zone, becomes a segment of the profile.</p>
            <p class="error" role="alert" id="follow-error" hidden></p>
            <noscript><p class="hint">Following a workout from this page needs JavaScript; without it, use <code>tactus playlist --follow</code>.</p></noscript>
            \(result)
            """
        return Page.document(title: "Playlist", section: .playlist, body: body, script: Self.script)
    }

    /// A note naming the songs the M3U8 leaves out: those with no file under the server's
    /// library roots (uploaded songs are stored by their content alone).
    static func withoutPath(_ playlist: Playlist) -> String {
        let songs = playlist.entries.map(\.match).filter(\.paths.isEmpty)
        guard !songs.isEmpty else { return "" }
        if songs.count == playlist.entries.count {
            return """
                <p class="note">None of these songs has a file under the server's library roots (uploaded songs are kept by \
                their content only), so the M3U8 lists none of them: analyse your music in place (<code>tactus serve \
                --library-root DIR</code>, then <code>tactus scan</code>) to make playlists a player can open.</p>
                """
        }
        let names = songs.prefix(5).map { HTML.escape($0.title.flatMap { $0.isEmpty ? nil : $0 } ?? $0.file) }.joined(separator: ", ")
        let more = songs.count > 5 ? " and \(songs.count - 5) more" : ""
        return """
            <p class="note">\(songs.count == 1 ? "1 song has" : "\(songs.count) songs have") no file under the server's library roots \
            (uploaded songs are kept by their content only), so the M3U8 leaves \(songs.count == 1 ? "it" : "them") out: \(names)\(more).</p>
            """
    }

    /// Sends the chosen workout to `POST /api/v1/playlist` and shows the playlist of the profile
    /// it was cut into (the page's own GET form, with the profile its fills give).
    static let script = """
        document.getElementById("follow").addEventListener("submit", async (event) => {
          event.preventDefault();
          const form = event.target, error = document.getElementById("follow-error");
          const file = form.workout.files[0];
          if (!file) return;
          const main = document.querySelector("form[aria-label=Cadence]");
          const query = new URLSearchParams({name: file.name, by: form.by.value});
          if (form.max_heart_rate.value) query.set("max_heart_rate", form.max_heart_rate.value);
          for (const field of ["tolerance", "detector"]) if (main[field].value) query.set(field, main[field].value);
          error.hidden = true;
          try {
            const response = await fetch("/api/v1/playlist?" + query, {method: "POST", body: file});
            const reply = await response.json();
            if (!response.ok) throw new Error(reply.message || response.statusText);
            const profile = reply.playlist.fills
              .map((fill) => Math.max(1, Math.round(fill.segment.duration_s)) + "s@" + fill.segment.cadence.toFixed(1)).join(",");
            const next = new URLSearchParams({profile});
            for (const field of ["tolerance", "detector"]) if (main[field].value) next.set(field, main[field].value);
            window.location.href = "/playlist?" + next;
          } catch (failure) {
            error.textContent = tactusShown(failure.message);
            error.hidden = false;
          }
        });
        """

    /// The request of the form: a profile when one is given, else the cadence for the minutes.
    static func query(_ parameters: QueryParameters) throws(HTTPFailure) -> PlaylistQuery? {
        var values = parameters.values
        guard values["cadence"]?.isEmpty == false || values["profile"]?.isEmpty == false else { return nil }
        if values["profile"]?.isEmpty == false {
            values["cadence"] = nil
            values["minutes"] = nil
        }
        return try LibraryRequests.playlist(QueryParameters(values: values))
    }
}
