import TactusModel

/// Hands the memory the C heap keeps after a burst of large messages back to the system.
///
/// glibc keeps freed blocks in its arenas for reuse: after 400 connections sent 1 MiB songs at
/// once, the coordinator kept over 300 MiB it no longer used (and after workers' large messages,
/// which libzmq holds in the same heap). Mapping every large block on its
/// own would return it at once but costs a fresh mapping, and its page faults, for every frame
/// of every upload. Instead, once the frontend has taken ``burstBytes`` since the last trim,
/// the next heartbeat tick trims the heap (`malloc_trim`): a few milliseconds every few seconds
/// of heavy traffic, nothing when idle. So does a dropped connection: libzmq gives a frame its
/// whole buffer when the frame's size is read, and frees it unseen when the connection goes
/// before the frame is whole (200 such frames of 5.5 MB stayed in the heap, 1.1 GB).
struct HeapTrim {
    /// Bytes received after which the heap is trimmed at the next tick.
    static let burstBytes = 32 << 20

    private var receivedSinceTrim = 0
    private var droppedSinceTrim = 0

    /// Counts a message's bytes.
    mutating func received(_ frames: [[UInt8]]) {
        received(bytes: frames.reduce(0) { $0 + $1.count })
    }

    /// Counts bytes received (a message libzmq held, copied or not).
    mutating func received(bytes: Int) {
        receivedSinceTrim += bytes
    }

    /// Counts connections dropped: each may have held a frame that never came whole, which
    /// libzmq freed without the loop ever receiving its bytes.
    mutating func connectionsDropped(_ count: Int) {
        droppedSinceTrim += count
    }

    /// Trims the heap when a burst came, or connections were dropped, since the last trim.
    mutating func trimIfDue() {
        guard receivedSinceTrim >= Self.burstBytes || droppedSinceTrim > 0 else { return }
        receivedSinceTrim = 0
        droppedSinceTrim = 0
        SystemHeap.trim()
    }
}
