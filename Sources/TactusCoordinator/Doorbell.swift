import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A pipe that other threads ring to wake a poll loop: ``ring()`` makes ``descriptor``
/// readable until the loop calls ``silence()``. Both ends are non-blocking, so ringing a
/// bell that already rings (a full pipe) costs nothing and never waits.
final class Doorbell: Sendable {
    /// The end the loop polls (``ZMQPoller/add(readableDescriptor:)``).
    let descriptor: Int32
    private let writeEnd: Int32

    init() throws(CoordinatorError) {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else {
            throw CoordinatorError(message: "cannot create the loop's wake-up pipe: \(String(cString: strerror(errno)))")
        }
        for end in ends {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        descriptor = ends[0]
        writeEnd = ends[1]
    }

    /// Wakes the loop (from any thread).
    func ring() {
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    /// Empties the pipe, so that it is readable again only after the next ``ring()``.
    func silence() {
        var buffer = [UInt8](repeating: 0, count: 256)
        while read(descriptor, &buffer, buffer.count) > 0 {}
    }

    deinit {
        close(descriptor)
        close(writeEnd)
    }
}
