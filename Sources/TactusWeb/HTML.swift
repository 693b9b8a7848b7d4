import Foundation
import Hummingbird
import NIOCore
import TactusModel

/// Text made safe for HTML: `&`, `<`, `>`, quotes escaped, and control characters shown as
/// ``TactusModel/ShownText`` shows them (a name from a tag or a file is hostile until shown
/// escaped).
enum HTML {
    static func escape(_ text: String) -> String {
        var output = ""
        output.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": output += "&amp;"
            case "<": output += "&lt;"
            case ">": output += "&gt;"
            case "\"": output += "&quot;"
            case "'": output += "&#39;"
            default:
                if ShownText.isControl(scalar) {
                    output += ShownText.code(scalar)
                } else {
                    output.unicodeScalars.append(scalar)
                }
            }
        }
        return output
    }

    /// A query string of `parameters` (nil values left out), percent-encoded.
    static func query(_ parameters: [(String, String?)]) -> String {
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~@,"))
        let pairs = parameters.compactMap { name, value in
            value.map { "\(name)=\($0.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" }
        }
        return pairs.isEmpty ? "" : "?" + pairs.joined(separator: "&")
    }

    /// A number with at most `digits` decimals, trailing zeros dropped (`128`, `127.5`).
    static func number(_ value: Double?, digits: Int = 1) -> String {
        guard let value, value.isFinite else { return "–" }
        let text = String(format: "%.\(digits)f", value)
        guard text.contains(".") else { return text }
        var trimmed = text
        while trimmed.hasSuffix("0") { trimmed.removeLast() }
        if trimmed.hasSuffix(".") { trimmed.removeLast() }
        return trimmed
    }

    /// A count with thousands separated (`12,345`).
    static func count(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var grouped = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { grouped += "," }
            grouped.append(digit)
        }
        return (value < 0 ? "-" : "") + grouped
    }

    static func percent(_ share: Double?) -> String {
        guard let share, share.isFinite else { return "–" }
        return String(format: "%.0f %%", share * 100)
    }
}

/// The frame every page shares: the navigation, the style sheet, the page's own content.
enum Page {
    enum Section: String, CaseIterable {
        case library = "Library", compare = "Compare", playlist = "Playlist", queue = "Queue"

        var path: String {
            switch self {
            case .library: "/"
            case .compare: "/compare"
            case .playlist: "/playlist"
            case .queue: "/queue"
            }
        }
    }

    /// `tactusShown(value)`, given to every page's script: text from the server or a file (a
    /// worker id, an error message, a file name) as ``TactusModel/ShownText`` shows it, control
    /// characters and bidirectional marks written as `\x1B` and `\u{202E}`, for the text a
    /// script puts on the page (`textContent` keeps HTML out, not these).
    static let shownScript = #"""
        function tactusShown(value){
          return String(value).replace(/[\u0000-\u001F\u007F-\u009F\u200E\u200F\u202A-\u202E\u2066-\u2069]/g, function(c){
            var code = c.charCodeAt(0), hex = code.toString(16).toUpperCase();
            return code <= 0xFF ? '\\x' + (hex.length < 2 ? '0' : '') + hex : '\\u{' + hex + '}';
          });
        }

        """#

    static func document(title: String, section: Section?, body: String, script: String = "") -> String {
        let navigation = Section.allCases.map { item in
            let current = item == section ? " aria-current=\"page\"" : ""
            return "<a href=\"\(item.path)\"\(current)>\(item.rawValue)</a>"
        }.joined()
        return """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(HTML.escape(title)) · Tactus</title>
            <link rel="icon" href="data:,">
            <style>\(style)</style>
            </head>
            <body>
            <a class="skip" href="#main">Skip to content</a>
            <header><nav aria-label="Sections"><span class="brand">Tactus</span>\(navigation)</nav></header>
            <main id="main">
            \(body)
            </main>
            \(script.isEmpty ? "" : "<script>\(shownScript)\(script)</script>")
            </body>
            </html>
            """
    }

    static func response(_ html: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
    }

    /// A page that could not be shown: what went wrong, in the page's frame.
    static func failure(_ failure: HTTPFailure, section: Section?) -> Response {
        let body = """
            <h1>\(failure.status == .notFound ? "Not found" : "Something went wrong")</h1>
            <p class="error" role="alert">\(HTML.escape(failure.body.message)) <span class="code">(\(HTML.escape(failure.body.code.rawValue)))</span></p>
            <p><a href="/">Back to the library</a></p>
            """
        return response(document(title: "Error", section: section, body: body), status: failure.status)
    }

    static func login(next: String, failed: Bool, needed: Bool) -> String {
        let body = """
            <h1>Sign in</h1>
            \(needed ? "" : "<p>This server needs no token: <a href=\"/\">go to the library</a>.</p>")
            \(failed ? "<p class=\"error\" role=\"alert\">That token is not this server's.</p>" : "")
            <form method="post" action="/login" class="stack narrow">
            <input type="hidden" name="next" value="\(HTML.escape(next))">
            <label for="token">Access token</label>
            <input id="token" name="token" type="password" autocomplete="current-password" required autofocus>
            <p class="hint">The first line of the file given to <code>tactus serve --web-token-file</code>.</p>
            <button type="submit">Sign in</button>
            </form>
            """
        return document(title: "Sign in", section: nil, body: body)
    }

    static let style = """
        :root{--fg:#1d2330;--muted:#5b6475;--line:#d9dee7;--bg:#fff;--panel:#f5f7fa;--accent:#1f5fbf;--bad:#b3261e;--good:#1b7f3b;
        font-family:system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:var(--fg);background:var(--bg);line-height:1.45}
        body{margin:0}[hidden]{display:none!important}
        .skip{position:absolute;left:-999px}.skip:focus{left:8px;top:8px;background:#fff;padding:4px 8px;z-index:9}
        header{background:#17253d;color:#fff}
        nav{display:flex;flex-wrap:wrap;gap:2px 4px;align-items:center;max-width:1200px;margin:0 auto;padding:6px 16px}
        nav .brand{font-weight:700;margin-right:16px;letter-spacing:.02em}
        nav a{color:#dfe7f5;text-decoration:none;padding:8px 10px;border-radius:6px}
        nav a:hover,nav a:focus{background:#2b3d5e;color:#fff}
        nav a[aria-current=page]{background:#fff;color:#17253d;font-weight:600}
        main{max-width:1200px;margin:0 auto;padding:12px 16px 48px}
        h1{font-size:1.5rem;margin:.6em 0 .3em}h2{font-size:1.15rem;margin:1.4em 0 .4em}
        a{color:var(--accent)}
        :focus-visible{outline:3px solid #f0a500;outline-offset:2px}
        .muted,.hint{color:var(--muted)}.hint{font-size:.9rem;margin:.2em 0}
        .note{background:#fff8e1;border:1px solid #f0d58a;border-radius:8px;padding:8px 12px}
        .error{color:var(--bad)}.code{font-family:ui-monospace,monospace;font-size:.9em}
        form.filters{display:flex;flex-wrap:wrap;gap:10px 14px;align-items:flex-end;background:var(--panel);border:1px solid var(--line);
        border-radius:8px;padding:12px}
        form.filters label,.field{display:flex;flex-direction:column;font-size:.85rem;color:var(--muted);gap:2px}
        form.filters label.check{flex-direction:row;align-items:center;gap:6px;color:var(--fg);font-size:.95rem;padding-bottom:6px}
        input,select,button{font:inherit;padding:6px 8px;border:1px solid #b9c1cf;border-radius:6px;background:#fff;color:var(--fg)}
        input[type=number]{width:6.5em}
        button,.button{background:var(--accent);color:#fff;border-color:var(--accent);cursor:pointer;text-decoration:none;
        display:inline-block;padding:6px 14px;border-radius:6px}
        button.secondary,.button.secondary{background:#fff;color:var(--accent)}
        .stack{display:flex;flex-direction:column;gap:8px}.narrow{max-width:420px}
        .table-wrap{overflow-x:auto;border:1px solid var(--line);border-radius:8px;margin:8px 0}
        table{border-collapse:collapse;width:100%;font-size:.95rem}
        th,td{padding:7px 10px;text-align:left;border-bottom:1px solid var(--line);vertical-align:top}
        tbody tr:last-child td{border-bottom:0}
        th{background:var(--panel);font-weight:600;white-space:nowrap}
        td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
        caption{text-align:left;padding:6px 10px}
        th a.sort{color:inherit;text-decoration:none;font-weight:600}th a.sort:hover{text-decoration:underline}
        th a.sort::after{content:" ↕";color:#9aa3b2}
        th[aria-sort=ascending] a.sort::after{content:" ▲";color:var(--fg)}
        th[aria-sort=descending] a.sort::after{content:" ▼";color:var(--fg)}
        .title{font-weight:600}.file{color:var(--muted);font-size:.85rem;word-break:break-all}
        .pager{display:flex;gap:12px;align-items:center;margin:10px 0;flex-wrap:wrap}
        .summary{display:flex;flex-wrap:wrap;gap:10px;margin:10px 0}
        .stat{background:var(--panel);border:1px solid var(--line);border-radius:8px;padding:8px 12px;min-width:110px}
        .stat b{display:block;font-size:1.35rem}.stat span{color:var(--muted);font-size:.85rem}
        .figure svg{width:100%;height:auto;max-width:1100px;border:1px solid var(--line);border-radius:8px;background:#fff}
        figure.histogram{margin:14px 0}.histogram svg{width:100%;height:auto;max-height:200px;display:block}
        .histogram a rect{fill:#5b8fd8}.histogram a:hover rect,.histogram a:focus rect{fill:#1f5fbf}
        .pill{display:inline-block;padding:1px 8px;border-radius:999px;font-size:.8rem;background:#e8edf5;margin:1px 2px 1px 0}
        .pill.match,.pill.done{background:#dcf2e3;color:#14572a}.pill.wrong,.pill.failed{background:#fbe0de;color:#8c1d18}
        .pill.octave,.pill.triple,.pill.no-tempo,.pill.queued,.pill.running{background:#fff1cc;color:#6b4a00}
        .drop{border:2px dashed #9aa3b2;border-radius:10px;padding:22px;text-align:center;background:var(--panel)}
        .drop.over{border-color:var(--accent);background:#e9f0fb}.drop input{max-width:100%}
        ul.log{list-style:none;padding:0;margin:0;max-height:320px;overflow:auto;font-size:.9rem;border:1px solid var(--line);border-radius:8px}
        ul.log li{padding:5px 10px;border-bottom:1px solid var(--line)}
        .live{font-size:.85rem;color:var(--muted)}.live.on::before{content:"● ";color:var(--good)}.live.off::before{content:"● ";color:var(--bad)}
        details{margin:8px 0}summary{cursor:pointer;color:var(--accent)}
        .grid2{display:grid;grid-template-columns:repeat(auto-fit,minmax(320px,1fr));gap:16px}
        @media (max-width:640px){
        main{padding:8px 10px 40px}nav{padding:4px 8px}nav .brand{width:100%;margin:4px 0}
        nav a{padding:8px 8px}
        table.cards thead{display:none}.wide{display:none}
        table.cards tr{display:block;border-bottom:1px solid var(--line);padding:6px 0}
        table.cards td{display:block;border:0;padding:3px 10px;text-align:right;overflow-wrap:anywhere}
        table.cards td::before{content:attr(data-label);color:var(--muted);float:left;text-align:left;font-size:.85rem;margin-right:12px}
        table.cards td.lead{text-align:left;padding-top:6px}table.cards td.lead::before{content:none}
        table.cards td.empty{display:none}
        table.compact td:not(.lead){display:inline-block;width:20%;text-align:center;padding:2px 0}
        table.compact td:not(.lead)::before{float:none;display:block;margin:0;font-size:.75rem}
        form.filters{padding:10px}input[type=number]{width:5.5em}
        .stat{flex:1 1 40%;min-width:0}
        .figure{overflow-x:auto}.figure svg{min-width:760px}.figure .hint{display:block}
        .histogram{overflow-x:auto}.histogram svg{min-width:600px}
        }
        """
}
