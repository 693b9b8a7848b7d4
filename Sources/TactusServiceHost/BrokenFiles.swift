import Foundation
import TactusProtocol

#if canImport(Glibc)
import Glibc
#endif

/// The files that broke a service host lately (crashed it, or made it send what the channel
/// does not take), by service and by what the file is: its device, inode, size and modification
/// time. The same call on the same unchanged file fails again at once, without a host, for
/// ``memory``: a client repeating a call on a file that crashes TagLib from many connections
/// otherwise made every other client's calls wait behind the restarts (35 s for one `tags read`).
///
/// A file that changes (its size or time) is tried again. A call that ran past its time limit is
/// remembered only for the services that read a little of a file (``remembersTimeouts(of:)``):
/// a render or a cadence may run long on a loaded machine.
struct BrokenFiles {
    /// What a file is, for one service.
    struct Key: Hashable {
        var service: HostedService
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modifiedNs: Int64

        /// The key of the open file `descriptor` for `service`; nil when it cannot be read.
        init?(descriptor: Int32, service: HostedService) {
            var status = stat()
            guard fstat(descriptor, &status) == 0 else { return nil }
            self.service = service
            device = UInt64(status.st_dev)
            inode = UInt64(status.st_ino)
            size = Int64(status.st_size)
            modifiedNs = Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec)
        }
    }

    /// Whether a call of `service` that ran past its time limit is remembered: one that reads a
    /// file's tags or header, which takes a fraction of a second unless the file is made to hold
    /// the host (a WAV of 21 million empty chunks held the tags host for its whole minute).
    static func remembersTimeouts(of service: HostedService) -> Bool {
        [.tagsRead, .tagsWrite, .probe, .identify].contains(service)
    }

    /// How long a file that broke a host is not tried again.
    static let memory = Duration.seconds(600)
    /// Files remembered at most (the oldest go first).
    static let capacity = 1024

    private var entries: [Key: (at: ContinuousClock.Instant, error: ErrorBody)] = [:]

    /// Remembers that the call of `key`'s file failed with `error` at `now`.
    mutating func remember(_ key: Key, error: ErrorBody, at now: ContinuousClock.Instant) {
        forgetExpired(at: now)
        if entries.count >= Self.capacity, let oldest = entries.min(by: { $0.value.at < $1.value.at })?.key {
            entries[oldest] = nil
        }
        entries[key] = (now, error)
    }

    /// The error `key`'s file broke a host with, and how long ago, if that is within ``memory``.
    mutating func recall(_ key: Key, at now: ContinuousClock.Instant) -> (error: ErrorBody, age: Duration)? {
        forgetExpired(at: now)
        return entries[key].map { ($0.error, now - $0.at) }
    }

    private mutating func forgetExpired(at now: ContinuousClock.Instant) {
        entries = entries.filter { now - $0.value.at < Self.memory }
    }
}
