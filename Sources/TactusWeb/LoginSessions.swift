import Synchronization

/// The sessions the login form opens: the cookie holds a random identifier (256 bits from the
/// system's generator), never the token, so a cookie that leaks (a browser profile copied, a
/// log) is worth one session of this gateway, and ends with it. Sessions last 30 days and are
/// kept in memory only (a restarted gateway asks for the token again); at most 4096 are kept,
/// the oldest forgotten first.
final class LoginSessions: Sendable {
    static let lifetime: Duration = .seconds(30 * 24 * 3600)
    static let maximum = 4096

    private let opened = Mutex<[String: ContinuousClock.Instant]>([:])

    /// A new session's identifier: 64 lowercase hex digits.
    func open() -> String {
        var generator = SystemRandomNumberGenerator()
        let id = (0..<4).map { _ in
            let text = String(generator.next() as UInt64, radix: 16)
            return String(repeating: "0", count: 16 - text.count) + text
        }.joined()
        let now = ContinuousClock.now
        opened.withLock { sessions in
            sessions = sessions.filter { now - $0.value < Self.lifetime }
            if sessions.count >= Self.maximum, let oldest = sessions.min(by: { $0.value < $1.value }) {
                sessions[oldest.key] = nil
            }
            sessions[id] = now
        }
        return id
    }

    /// Whether `id` names a session opened less than ``lifetime`` ago.
    func isOpen(_ id: String) -> Bool {
        opened.withLock { sessions in
            guard let start = sessions[id] else { return false }
            return ContinuousClock.now - start < Self.lifetime
        }
    }
}
