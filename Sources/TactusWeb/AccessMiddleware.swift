import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import TactusProtocol

/// What every request goes through before its route: the `Host` check (``AllowedHosts``, 421
/// otherwise), the cross-origin check of requests that change something (``CrossOriginCheck``,
/// 403), and with a token, the token: `Authorization: Bearer TOKEN`, or the session cookie the
/// login form sets. The login page is open; an API request (or `/metrics`) without the token is
/// answered 401 with a JSON error, a page request is sent to the login form. A client that sent
/// too many wrong tokens is answered 429 without its token being checked (``TokenGuesses``). Every answer,
/// refusals and unknown routes included, carries the security headers; an API path's failure is
/// the protocol's JSON error, a page's an HTML page.
struct AccessMiddleware: RouterMiddleware {
    typealias Context = GatewayContext
    static let cookieName = "tactus_session"
    let token: String?
    let hosts: AllowedHosts
    let sessions: LoginSessions
    let guesses: TokenGuesses

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = await answer(request, context: context, next: next)
        // Pages are never framed by another site, nor sniffed as another type; scripts only from here.
        response.headers[HTTPField.Name("X-Frame-Options")!] = "DENY"
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[HTTPField.Name("Referrer-Policy")!] = "same-origin"
        if response.headers[.contentType]?.hasPrefix("text/html") == true {
            response.headers[.contentSecurityPolicy] =
                "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
                + "frame-ancestors 'none'; form-action 'self'"
        }
        if request.method == .head { response.body = ResponseBody() }
        return response
    }

    private func answer(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async -> Response {
        let path = request.uri.path
        let authority = request.head.authority
        guard hosts.allows(authority) else {
            return HTTPFailure(
                .misdirectedRequest, .forbidden,
                "this gateway does not answer to the host name '\(QueryParameters.shown(authority ?? ""))' "
                    + "(a name of its own is given to it with --allowed-host)"
            ).response()
        }
        var bearer = false
        if let token, let presented = Self.presentedBearer(request) {
            switch guesses.check(presented, against: token, from: context.remoteAddress, logger: context.logger) {
            case .right: bearer = true
            case .wrong: break
            case .refused(let failure): return Self.isAPI(path) ? failure.response() : Page.failure(failure, section: nil)
            }
        }
        if !bearer, let refusal = CrossOriginCheck.refusal(request) {
            return HTTPFailure(.forbidden, .forbidden, refusal).response()
        }
        if token != nil, !bearer, !Self.isOpen(path), !(Self.session(request).map(sessions.isOpen) ?? false) {
            if Self.isAPI(path) {
                return HTTPFailure(
                    .unauthorized, .forbidden,
                    "this gateway needs its token: send 'Authorization: Bearer TOKEN' (the first line of the server's --web-token-file)"
                ).response()
            }
            let next = request.uri.string.hasPrefix("/") ? request.uri.string : "/"
            return Response(status: .seeOther, headers: [.location: "/login?next=" + Self.formEncoded(next)])
        }
        do {
            return try await next(request, context)
        } catch {
            // No route for the path and method (Hummingbird throws 404), or another HTTP error.
            let failure: HTTPFailure
            if let error = error as? any HTTPResponseError, error.status == .notFound {
                failure = HTTPFailure(.notFound, .notFound, "no such page or endpoint: \(request.method) \(QueryParameters.shown(path))")
            } else if let error = error as? any HTTPResponseError {
                failure = HTTPFailure(error.status, error.status.code < 500 ? .badRequest : .internal, "\(error.status)")
            } else {
                failure = HTTPFailure.from(error)
            }
            return Self.isAPI(path) ? failure.response() : Page.failure(failure, section: nil)
        }
    }

    static func isOpen(_ path: String) -> Bool { path == "/login" || path == "/favicon.ico" }

    /// Whether `path` is answered in JSON (the HTTP API, `/metrics`) rather than as a page.
    static func isAPI(_ path: String) -> Bool { path.hasPrefix("/api/") || path == "/metrics" }

    /// The token the request presents as a bearer token (`Authorization: Bearer TOKEN`), if any.
    static func presentedBearer(_ request: Request) -> String? {
        guard let authorization = request.headers[.authorization], authorization.lowercased().hasPrefix("bearer ") else { return nil }
        return String(authorization.dropFirst(7)).trimmingCharacters(in: .whitespaces)
    }

    /// The session identifier of the login cookie, if the request has one.
    static func session(_ request: Request) -> String? {
        for header in request.headers[values: .cookie] {
            for pair in header.split(separator: ";") {
                let parts = pair.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
                if parts.count == 2, parts[0] == cookieName { return String(parts[1]) }
            }
        }
        return nil
    }

    /// Compares without stopping at the first difference, so that timing tells nothing of the token.
    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        var difference = UInt8(x.count == y.count ? 0 : 1)
        for index in 0..<max(x.count, y.count) {
            difference |= (index < x.count ? x[index] : 0) ^ (index < y.count ? y[index] : 0)
        }
        return difference == 0
    }

    static func formEncoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~/"))) ?? "/"
    }

    /// Whether the request reached the gateway over TLS, through a reverse proxy that says so
    /// (`X-Forwarded-Proto: https`, or `Forwarded: proto=https`). The header is believed from
    /// anyone: it only makes the login cookie `Secure`, which a client that sends it falsely
    /// turns against itself alone; a page of another site cannot set it (it would need a CORS
    /// preflight), and a DNS-rebinding page never gets past the `Host` check.
    static func arrivedOverTLS(_ request: Request) -> Bool {
        if let proto = request.headers[xForwardedProto]?.split(separator: ",").first,
            proto.trimmingCharacters(in: .whitespaces).lowercased() == "https"
        {
            return true
        }
        guard let forwarded = request.headers[forwarded]?.split(separator: ",").first else { return false }
        return forwarded.split(separator: ";").contains { pair in
            pair.trimmingCharacters(in: .whitespaces).lowercased().replacingOccurrences(of: "\"", with: "") == "proto=https"
        }
    }

    static let xForwardedProto = HTTPField.Name("X-Forwarded-Proto")!
    static let forwarded = HTTPField.Name("Forwarded")!
}

/// `/login`: the form that asks for the token and opens a session: its cookie (HttpOnly,
/// SameSite=Strict, and Secure when the request came over TLS through a proxy) holds the
/// session's identifier, not the token.
struct LoginRoutes: Sendable {
    let token: String?
    let sessions: LoginSessions
    let guesses: TokenGuesses

    func register(on router: Router<GatewayContext>) {
        router.get("login") { request, _ in
            let next = Self.safeNext(QueryParameters(request).text("next"))
            return Page.response(Page.login(next: next, failed: false, needed: token != nil))
        }
        router.post("login") { request, context in
            var request = request
            let buffer = (try? await request.collectBody(upTo: 16 << 10)) ?? ByteBuffer()
            let form = Self.form(String(buffer: buffer))
            let next = Self.safeNext(form["next"])
            var right = false
            if let token, let given = form["token"] {
                switch guesses.check(given, against: token, from: context.remoteAddress, logger: context.logger) {
                case .right: right = true
                case .wrong: break
                case .refused(let failure): return Page.failure(failure, section: nil)
                }
            }
            guard right else {
                var response = Page.response(Page.login(next: next, failed: token != nil, needed: token != nil))
                if token != nil { response.status = .unauthorized }
                return response
            }
            let secure = AccessMiddleware.arrivedOverTLS(request) ? "; Secure" : ""
            let lifetime = LoginSessions.lifetime.components.seconds
            return Response(
                status: .seeOther,
                headers: [
                    .location: next,
                    .setCookie:
                        "\(AccessMiddleware.cookieName)=\(sessions.open()); Path=/; HttpOnly; SameSite=Strict; Max-Age=\(lifetime)\(secure)",
                ])
        }
    }

    /// Only a path of this site: anything else (`//evil.example`, `https://...`) goes to `/`.
    static func safeNext(_ next: String?) -> String {
        guard let next, next.hasPrefix("/"), !next.hasPrefix("//"), !next.hasPrefix("/\\"),
            !next.unicodeScalars.contains(where: { $0.value < 0x20 })
        else { return "/" }
        return next
    }

    /// An `application/x-www-form-urlencoded` body.
    static func form(_ body: String) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in body.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).formDecoded }
            if parts.count == 2 { fields[parts[0]] = parts[1] }
        }
        return fields
    }
}
