import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A small blocking HTTP client for the tests: one request, its status, headers and body.
struct HTTP {
    struct Reply {
        var status: Int
        var headers: [String: String]
        var body: Data

        var text: String { String(decoding: body, as: UTF8.self) }
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }
        /// The protocol's error code of an error reply.
        var code: String? { json["code"] as? String }
        func header(_ name: String) -> String? {
            headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
        }
    }

    let base: String

    /// A session that does not follow redirects (the tests look at them) and keeps no cookies.
    private static let session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpCookieAcceptPolicy = .never
        configuration.httpShouldSetCookies = false
        return URLSession(configuration: configuration, delegate: NoRedirects(), delegateQueue: nil)
    }()

    func get(_ path: String, headers: [String: String] = [:]) -> Reply {
        send("GET", path, headers: headers)
    }

    func send(_ method: String, _ path: String, body: Data? = nil, headers: [String: String] = [:], timeout: TimeInterval = 60) -> Reply {
        let url = URL(string: base.hasSuffix("/") && path.hasPrefix("/") ? String(base.dropLast()) + path : base + path)!
        var request = URLRequest(url: url, timeoutInterval: timeout)
        request.httpMethod = method
        request.httpBody = body
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var reply = Reply(status: 0, headers: [:], body: Data())
        let task = Self.session.dataTask(with: request) { data, response, error in
            if let response = response as? HTTPURLResponse {
                var headers: [String: String] = [:]
                for (name, value) in response.allHeaderFields { headers["\(name)"] = "\(value)" }
                reply = Reply(status: response.statusCode, headers: headers, body: data ?? Data())
            } else {
                reply = Reply(status: -1, headers: [:], body: Data("\(error.map { "\($0)" } ?? "no response")".utf8))
            }
            done.signal()
        }
        task.resume()
        done.wait()
        return reply
    }
}

private final class NoRedirects: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}
