import Foundation
import TactusZMQ

/// A unique `inproc://` endpoint per test, so parallel tests never share one.
func inprocEndpoint(_ name: String = #function) -> String {
    "inproc://\(name.filter(\.isLetter))-\(UUID().uuidString)"
}

/// The UTF-8 bytes of `text`, for readable frames.
func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// A thread of this process as Linux shows it in `/proc/self/task/TID`: whether it is blocked
/// in the kernel, so that a test can act once a thread waits in a call rather than after a pause.
struct LinuxThread: Sendable {
    /// The thread's id (TID).
    let id: String

    /// The calling thread (`/proc/thread-self` links to `PID/task/TID`).
    static func current() throws -> LinuxThread {
        LinuxThread(id: (try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self") as NSString).lastPathComponent)
    }

    /// True while the thread sleeps in the kernel (state `S`: blocked in a call such as `poll`).
    var isBlocked: Bool {
        guard let stat = try? String(contentsOfFile: "/proc/self/task/\(id)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return false }
        return stat[stat.index(after: close)...].split(separator: " ").first == "S"
    }
}
