import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import TactusProtocol

/// With a token, every request must carry it: `Authorization: Bearer TOKEN`, or the cookie
/// the login form sets. The login page and the style sheet are open; an API request (or
/// `/metrics`) without the token is answered 401 with a JSON error, a page request is sent
/// to the login form.
struct AccessMiddleware: RouterMiddleware {
    typealias Context = BasicRequestContext
    static let cookieName = "tactus_token"
    let token: String?

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response: Response
        if let token, !Self.isOpen(request.uri.path), !Self.carries(token, request) {
            let path = request.uri.path
            if path.hasPrefix("/api/") || path == "/metrics" {
                response = HTTPFailure(
                    .unauthorized, .forbidden,
                    "this gateway needs its token: send 'Authorization: Bearer TOKEN' (the first line of the server's --web-token-file)"
                ).response()
            } else {
                let next = request.uri.string.hasPrefix("/") ? request.uri.string : "/"
                response = Response(status: .seeOther, headers: [.location: "/login?next=" + Self.formEncoded(next)])
            }
        } else {
            response = try await next(request, context)
        }
        // Pages are never framed by another site, nor sniffed as another type; scripts only from here.
        response.headers[HTTPField.Name("X-Frame-Options")!] = "DENY"
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[HTTPField.Name("Referrer-Policy")!] = "same-origin"
        if response.headers[.contentType]?.hasPrefix("text/html") == true {
            response.headers[.contentSecurityPolicy] =
                "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
                + "frame-ancestors 'none'; form-action 'self'"
        }
        return response
    }

    static func isOpen(_ path: String) -> Bool { path == "/login" || path == "/favicon.ico" }

    /// Whether the request carries `token`, as a bearer token or the login cookie.
    static func carries(_ token: String, _ request: Request) -> Bool {
        if let authorization = request.headers[.authorization], authorization.lowercased().hasPrefix("bearer "),
            constantTimeEqual(String(authorization.dropFirst(7)).trimmingCharacters(in: .whitespaces), token)
        {
            return true
        }
        for header in request.headers[values: .cookie] {
            for pair in header.split(separator: ";") {
                let parts = pair.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
                if parts.count == 2, parts[0] == cookieName, constantTimeEqual(String(parts[1]), token) { return true }
            }
        }
        return false
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
}

/// `/login`: the form that asks for the token and sets the cookie (HttpOnly, SameSite=Strict).
struct LoginRoutes: Sendable {
    let token: String?

    func register(on router: Router<BasicRequestContext>) {
        router.get("login") { request, _ in
            let next = Self.safeNext(QueryParameters(request).text("next"))
            return Page.response(Page.login(next: next, failed: false, needed: token != nil))
        }
        router.post("login") { request, _ in
            var request = request
            let buffer = (try? await request.collectBody(upTo: 16 << 10)) ?? ByteBuffer()
            let form = Self.form(String(buffer: buffer))
            let next = Self.safeNext(form["next"])
            guard let token, let given = form["token"], AccessMiddleware.constantTimeEqual(given, token) else {
                var response = Page.response(Page.login(next: next, failed: token != nil, needed: token != nil))
                if token != nil { response.status = .unauthorized }
                return response
            }
            return Response(
                status: .seeOther,
                headers: [
                    .location: next,
                    .setCookie: "\(AccessMiddleware.cookieName)=\(given); Path=/; HttpOnly; SameSite=Strict; Max-Age=2592000",
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
