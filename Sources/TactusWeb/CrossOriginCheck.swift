import HTTPTypes
import Hummingbird

/// Cross-site request forgery: a page of another site can make a browser send a form or a
/// `fetch` POST here (a `text/plain` body needs no CORS preflight), with the login cookie, and
/// without a token the gateway would take it from anyone. A request that changes something
/// (any method but GET, HEAD and OPTIONS) is therefore refused when a browser says it comes from
/// another origin, as Go's `http.CrossOriginProtection` decides:
///
/// 1. `Sec-Fetch-Site` (sent by every current browser, set by no script): `same-origin` or
///    `none` (typed by the user) is taken, anything else refused;
/// 2. else `Origin` (sent by browsers on every cross-origin request, and on every POST): its
///    host and port must be the request's `Host`; `null` (a sandboxed or privacy-hidden page)
///    is refused;
/// 3. else `Referer`, the same way (browsers too old to send `Origin`);
/// 4. a request with none of the three comes from no browser (curl, the Python client, a
///    script): it cannot carry a victim's cookie without the person running it, and is taken.
///
/// A request with the gateway's token in `Authorization: Bearer` is taken in any case: a page
/// of another site cannot set that header (it would need a CORS preflight the gateway does not
/// answer).
enum CrossOriginCheck {
    /// Why `request` is refused as a cross-origin request; nil when it is taken.
    static func refusal(_ request: Request) -> String? {
        guard ![.get, .head, .options].contains(request.method) else { return nil }
        let authority = request.head.authority
        if let site = request.headers[secFetchSite] {
            guard site != "same-origin", site != "none" else { return nil }
            return "a \(request.method) from another site (Sec-Fetch-Site: \(QueryParameters.shown(site))) is refused: "
                + "only this gateway's pages, or a request with its token, may change anything"
        }
        if let origin = request.headers[.origin] {
            guard !Self.isSameOrigin(origin, authority) else { return nil }
            return "a \(request.method) from another origin (Origin: \(QueryParameters.shown(origin))) is refused: "
                + "only this gateway's pages (\(QueryParameters.shown(authority ?? "no Host"))), or a request with its token, may change anything"
        }
        if let referer = request.headers[.referer] {
            guard !Self.isSameOrigin(referer, authority) else { return nil }
            return "a \(request.method) from another site (Referer: \(QueryParameters.shown(referer))) is refused: "
                + "only this gateway's pages, or a request with its token, may change anything"
        }
        return nil
    }

    static let secFetchSite = HTTPField.Name("Sec-Fetch-Site")!

    /// Whether `url` (an `Origin` or a `Referer`: `http://HOST[:PORT]...`) names `authority` (`HOST[:PORT]`).
    static func isSameOrigin(_ url: String, _ authority: String?) -> Bool {
        let lowered = url.lowercased()
        guard let authority, let separator = lowered.range(of: "://") else { return false }
        let scheme = lowered[..<separator.lowerBound]
        let origin = lowered[separator.upperBound...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        return (scheme == "http" || scheme == "https") && !origin.isEmpty && !origin.contains("@") && origin == authority.lowercased()
    }
}
