import Foundation
import TactusProtocol

/// The directories under which clients may name server-side files to submit.
///
/// A path is resolved first (symbolic links and `..` included, with `realpath`) and must then
/// lie inside one of the roots (themselves resolved), so no name a client sends reaches a file
/// outside them. With no roots, submitting by path is refused.
struct LibraryRoots {
    private let roots: [String]

    init(_ roots: [String]) {
        self.roots = roots.compactMap(Self.realPath)
    }

    /// The resolved path of `path`, or a `forbidden` or `not-found` error.
    func resolve(_ path: String) throws(ErrorBody) -> String {
        guard !roots.isEmpty else {
            throw ErrorBody(
                code: .forbidden, message: "submitting by server-side path is disabled (start the server with --library-root DIR)")
        }
        guard let resolved = Self.realPath(path) else {
            throw ErrorBody(code: .notFound, message: "\(path): no such file on the server")
        }
        guard roots.contains(where: { resolved == $0 || resolved.hasPrefix($0.hasSuffix("/") ? $0 : $0 + "/") }) else {
            throw ErrorBody(code: .forbidden, message: "\(path): outside the server's library roots")
        }
        return resolved
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
