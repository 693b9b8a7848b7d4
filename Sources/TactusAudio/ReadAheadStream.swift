import Foundation
import TactusModel

/// A song decoded on a thread of its own, a few blocks ahead of its reader, so that decoding
/// and what the reader does with each block (the detectors) run at once on two cores: one
/// song's analysis then takes about the longer of the two, not their sum.
///
/// It takes over an ``AudioStream`` just opened and delivers the same blocks in the same
/// order, with the same errors at the same place: a failure is thrown once the blocks decoded
/// before it have been read. At most ``depth`` blocks wait, so memory stays bounded whatever
/// the song's length.
///
/// ```swift
/// let ahead = ReadAheadStream(try AudioStream(.file(path)))
/// while case .delivered = try ahead.readBlock(before: nil, { session.consume($0) }) {}
/// print(ahead.metadata.duration, ahead.warnings)
/// ```
///
/// A reader that stops early (a time limit) just lets go of it: the decoding thread ends at
/// its next block. Where no thread can be made (a process at its address-space limit, say),
/// the stream is decoded on the reader's thread instead, as without read-ahead. One thread
/// reads it at a time.
public final class ReadAheadStream {
    /// The rate of the samples delivered (``AudioStream/sampleRate``).
    public let sampleRate: Int
    /// The number of samples the song should have, when known (``AudioStream/expectedFrames``).
    public let expectedFrames: Int?
    /// The file path or the name of the in-memory bytes.
    public let name: String
    /// Blocks decoded ahead at most.
    public let depth: Int

    private let shared: Shared
    /// False when the stream is decoded on the reader's thread (no decoding thread could be made).
    private let threaded: Bool

    /// What one read gave.
    public enum Step: Sendable, Equatable {
        /// A block was handed to the reader.
        case delivered
        /// The song has ended; ``metadata`` and ``warnings`` are final.
        case ended
        /// The deadline passed before the next block was decoded.
        case late
    }

    /// Starts decoding `stream` on a new thread (unless `threaded` is false: then each read
    /// decodes its block on the reader's thread); the stream is not to be used elsewhere from now on.
    public init(_ stream: AudioStream, depth: Int = 16, threaded: Bool = true) {
        sampleRate = stream.sampleRate
        expectedFrames = stream.expectedFrames
        name = stream.name
        self.depth = max(depth, 1)
        shared = Shared(stream: stream, depth: self.depth)
        self.threaded = threaded && shared.startThread()
    }

    deinit {
        shared.stop()
    }

    /// What is known about the song: the header's estimate until the song has ended, then
    /// with its exact duration.
    public var metadata: AudioMetadata { shared.withLock { $0.metadata } }

    /// Warnings so far (a truncated file, once the end is reached).
    public var warnings: [AudioWarning] { shared.withLock { $0.warnings } }

    /// Wall-clock seconds the decoder has spent decoding so far, on its own thread (or, without
    /// one, on the reader's).
    public var decodingSeconds: Double { shared.withLock { $0.decodingSeconds } }

    /// Hands the next block to `body` (valid only inside it), or says that the song has ended
    /// or that `deadline` passed while waiting for the decoder (the wait gives up then; a
    /// later read waits again).
    ///
    /// - Throws: what ``AudioStream/readBlock(_:)`` throws, after the blocks before it.
    public func readBlock(
        before deadline: ContinuousClock.Instant?, _ body: (UnsafeBufferPointer<Float>) -> Void
    ) throws(AudioError) -> Step {
        guard threaded else { return try shared.readInline(body) ? .delivered : .ended }
        return try shared.readDecoded(before: deadline, body)
    }
}

extension ReadAheadStream {
    /// The state the two threads share, under one lock: a ring of decoded blocks, the end
    /// and its failure, and the song's metadata as the decoder last left it.
    fileprivate final class Shared: @unchecked Sendable {
        /// Touched only by the decoding thread (or, without one, by the reader).
        private let stream: AudioStream
        private let condition = NSCondition()
        private var slots: [[Float]]
        private var counts: [Int]
        /// The oldest decoded block's slot, and how many are decoded and unread.
        private var head = 0
        private var filled = 0
        /// Set by the decoder once the song has ended (with the failure that ended it, if any).
        private var ended = false
        private var failure: AudioError?
        /// Set when the reader has let go: the decoder stops at its next block.
        private var stopping = false
        /// Which side waits on the condition (never both: one waits for a block, the other
        /// for room), so that the other wakes it only when there is enough to do.
        private var readerWaits = false
        private var decoderWaits = false
        /// Blocks decoded (or room made) before a waiting side is woken: waking once per
        /// block would cost more system time than a block's decoding saves.
        private let batch: Int
        fileprivate private(set) var metadata: AudioMetadata
        fileprivate private(set) var warnings: [AudioWarning] = []
        fileprivate private(set) var decodingSeconds = 0.0

        init(stream: AudioStream, depth: Int) {
            self.stream = stream
            slots = Array(repeating: [], count: depth)
            counts = Array(repeating: 0, count: depth)
            batch = max(depth / 2, 1)
            metadata = stream.metadata
        }

        func withLock<T>(_ body: (Shared) -> T) -> T {
            condition.lock()
            defer { condition.unlock() }
            return body(self)
        }

        /// Starts the decoding thread (detached; it keeps this object until it ends); false
        /// when the system cannot make one.
        func startThread() -> Bool {
            var attributes = pthread_attr_t()
            pthread_attr_init(&attributes)
            defer { pthread_attr_destroy(&attributes) }
            // Decoders keep their buffers on the heap; this leaves room for the C libraries.
            pthread_attr_setstacksize(&attributes, 2 << 20)
            pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
            let context = Unmanaged.passRetained(self).toOpaque()
            var thread = pthread_t()
            let status = pthread_create(
                &thread, &attributes,
                { context in
                    Unmanaged<Shared>.fromOpaque(context!).takeRetainedValue().decode()
                    return nil
                }, context)
            guard status == 0 else {
                Unmanaged<Shared>.fromOpaque(context).release()
                return false
            }
            return true
        }

        /// The decoding thread: fills free slots until the song ends or the reader lets go.
        private func decode() {
            while true {
                condition.lock()
                while filled == slots.count && !stopping {
                    decoderWaits = true
                    condition.wait()
                    decoderWaits = false
                }
                if stopping {
                    condition.unlock()
                    return
                }
                let slot = (head + filled) % slots.count
                var buffer = slots[slot]
                slots[slot] = []  // the buffer is not shared while it is filled: no copy on write
                condition.unlock()

                var count = 0
                var more = false
                var failure: AudioError?
                let start = ContinuousClock.now
                do throws(AudioError) {
                    // The block is decoded into the slot's buffer, not copied there.
                    if let decoded = try stream.readBlock(into: &buffer) {
                        count = decoded
                        more = true
                    }
                } catch {
                    failure = error
                }

                let spent = ContinuousClock.now - start
                condition.lock()
                decodingSeconds += spent.seconds
                slots[slot] = buffer
                if more {
                    counts[slot] = count
                    filled += 1
                } else {
                    ended = true
                    self.failure = failure
                    metadata = stream.metadata
                    warnings = stream.warnings
                }
                if readerWaits && (filled >= batch || ended) { condition.signal() }
                condition.unlock()
                if !more { return }
            }
        }

        /// The reader's side: the oldest decoded block, else the end, else a wait.
        func readDecoded(
            before deadline: ContinuousClock.Instant?, _ body: (UnsafeBufferPointer<Float>) -> Void
        ) throws(AudioError) -> Step {
            condition.lock()
            while filled == 0 && !ended {
                var woken = true
                readerWaits = true
                if let deadline {
                    let remaining = ContinuousClock.now.duration(to: deadline).seconds
                    woken = remaining > 0 && condition.wait(until: Date(timeIntervalSinceNow: remaining))
                } else {
                    condition.wait()
                }
                readerWaits = false
                if !woken && filled == 0 && !ended {
                    condition.unlock()
                    return .late
                }
            }
            guard filled > 0 else {
                let failure = self.failure
                condition.unlock()
                if let failure { throw failure }
                return .ended
            }
            let slot = head
            let buffer = slots[slot]
            slots[slot] = []  // one owner at a time: the decoder never copies it on write
            let count = counts[slot]
            condition.unlock()

            buffer.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[0..<count])) }

            condition.lock()
            slots[slot] = consume buffer
            head = (head + 1) % slots.count
            filled -= 1
            if decoderWaits && filled <= slots.count - batch { condition.signal() }
            condition.unlock()
            return .delivered
        }

        /// Without a decoding thread: decodes the next block on the reader's thread.
        func readInline(_ body: (UnsafeBufferPointer<Float>) -> Void) throws(AudioError) -> Bool {
            var decoding = Duration.zero
            defer {
                condition.lock()
                metadata = stream.metadata
                warnings = stream.warnings
                decodingSeconds += decoding.seconds
                condition.unlock()
            }
            // The block is decoded before `body` sees it: only the time until then is decoding.
            let start = ContinuousClock.now
            return try stream.readBlock { block in
                decoding = ContinuousClock.now - start
                body(block)
            }
        }

        /// The reader lets go: the decoding thread ends at its next block.
        func stop() {
            condition.lock()
            stopping = true
            condition.broadcast()
            condition.unlock()
        }
    }
}
