import Foundation
import TactusZMQ

/// A unique `inproc://` endpoint per test, so parallel tests never share one.
func inprocEndpoint(_ name: String = #function) -> String {
    "inproc://\(name.filter(\.isLetter))-\(UUID().uuidString)"
}

/// The UTF-8 bytes of `text`, for readable frames.
func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// A value shared between a test and a thread it starts.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<Result>(_ body: (inout Value) -> Result) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}
