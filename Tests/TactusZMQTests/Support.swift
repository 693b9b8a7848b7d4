import Foundation
import TactusZMQ

/// A unique `inproc://` endpoint per test, so parallel tests never share one.
func inprocEndpoint(_ name: String = #function) -> String {
    "inproc://\(name.filter(\.isLetter))-\(UUID().uuidString)"
}

/// The UTF-8 bytes of `text`, for readable frames.
func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }
