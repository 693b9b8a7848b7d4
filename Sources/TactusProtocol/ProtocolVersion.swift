/// A version of the Tactus wire protocol, named on the wire by its identifier frame
/// (`TACTUS1`), which follows the envelope of every message.
///
/// The version changes only for incompatible changes. Compatible additions (new optional JSON
/// fields, new error codes, new commands) keep it: receivers ignore JSON fields they do not
/// know. A peer that sends a version the receiver does not speak gets an
/// ``ErrorCode/unsupportedVersion`` error naming ``supported`` (see `protocol/SPEC.md`).
public struct ProtocolVersion: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The version number (1 for `TACTUS1`).
    public let number: Int

    public init(_ number: Int) {
        self.number = number
    }

    /// The identifier frame's text, `TACTUS` followed by the decimal number.
    public var identifier: String { Self.prefix + String(number) }

    /// The identifier frame's bytes.
    public var frame: [UInt8] { Array(identifier.utf8) }

    public var description: String { identifier }

    public static func < (lhs: ProtocolVersion, rhs: ProtocolVersion) -> Bool { lhs.number < rhs.number }

    /// Version 1: a worker offers one detector and receives one job per JOB.
    public static let v1 = ProtocolVersion(1)
    /// Version 2: a worker offers several detectors and receives all of a song's jobs for
    /// them in one JOB (one decode per song), answered by one RESULT. Only the backend's
    /// READY, JOB and RESULT bodies differ from version 1.
    public static let v2 = ProtocolVersion(2)
    /// The newest version this implementation speaks.
    public static let current = v2
    /// Every version this implementation accepts, oldest first.
    public static let supported: [ProtocolVersion] = [v1, v2]
    /// The version client requests, replies and events are sent in: their layout is the same
    /// in every version, so they go out as the oldest, which every peer reads (a reply echoes
    /// the version of its request).
    public static let frontend = v1

    static let prefix = "TACTUS"

    /// Reads an identifier frame: the version if it is one of ``supported``.
    ///
    /// - Throws: ``ProtocolError/unsupportedVersion(received:supported:)`` for `TACTUS<n>`
    ///   with another `n` (or anything else starting with `TACTUS`), and
    ///   ``ProtocolError/notTactus(received:)`` for a frame that is not a Tactus identifier.
    static func check(_ frame: [UInt8]) throws(ProtocolError) -> ProtocolVersion {
        if let version = supported.first(where: { $0.frame == frame }) { return version }
        let received = Printable.text(frame, limit: 32)
        if frame.starts(with: Array(prefix.utf8)) {
            throw .unsupportedVersion(received: received, supported: supported.map(\.identifier))
        }
        throw .notTactus(received: received)
    }
}
