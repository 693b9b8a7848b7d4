import TactusProtocol

/// The protocol fuzz target: one input is a sequence of frames, fed to every decoder of the
/// wire protocol, with the standard limits and with tight ones.
///
/// An input is read as frames, each a 2-byte little-endian length followed by that many
/// bytes (the last frame takes what is left when the length runs past the end). A decoder
/// may refuse the frames with its typed error; what it must never do is trap, and what it
/// accepts must survive a round trip: encoded again and decoded, it is the same message.
/// A failed property stops the process (`fatalError`), which libFuzzer records as a crash.
enum ProtocolFuzzer {
    /// Frames beyond the standard limit of 16, so the frame-count checks are exercised.
    static let maxFrames = 40

    /// Tight limits, so that every size check is reached by small inputs.
    static let tightLimits = ProtocolLimits(
        maxFrames: 6, maxBodyBytes: 512, maxAudioBytes: 256, maxFloatArrayBytes: 64, maxRequestIDBytes: 8)

    /// Splits `bytes` into frames (see the type's documentation).
    static func frames(_ bytes: UnsafeRawBufferPointer) -> [[UInt8]] {
        var frames: [[UInt8]] = []
        var offset = 0
        while offset < bytes.count && frames.count < maxFrames {
            guard offset + 2 <= bytes.count else {
                frames.append(Array(bytes[offset...]))
                break
            }
            let length = Int(bytes[offset]) | Int(bytes[offset + 1]) << 8
            let start = offset + 2
            let end = min(start + length, bytes.count)
            frames.append(Array(bytes[start..<end]))
            offset = end
        }
        return frames
    }

    /// The inverse of ``frames(_:)`` for frames under 64 KiB: what the seed corpus is made of.
    static func input(_ frames: [[UInt8]]) -> [UInt8] {
        var bytes: [UInt8] = []
        for frame in frames {
            precondition(frame.count <= 0xFFFF, "a fuzz frame has at most 65535 bytes")
            bytes += [UInt8(frame.count & 0xFF), UInt8(frame.count >> 8)] + frame
        }
        return bytes
    }

    /// Feeds `frames` to every decoder with both limits; returns how many accepted them.
    @discardableResult
    static func run(_ frames: [[UInt8]]) -> Int {
        var accepted = 0
        for limits in [ProtocolLimits.standard, tightLimits] {
            accepted += clientRequest(frames, limits) + clientReply(frames, limits) + workerMessage(frames, limits)
                + coordinatorMessage(frames, limits) + event(frames, limits)
        }
        return accepted
    }

    /// A request as the frontend ROUTER receives it (envelope first) and as a client writes it.
    private static func clientRequest(_ frames: [[UInt8]], _ limits: ProtocolLimits) -> Int {
        var accepted = 0
        var messages = [frames]
        if let split = try? ClientEnvelope.split(frames) {
            messages.append(split.message)
            check(split.envelope.wrap(split.message) == frames, "envelope split and wrap", frames)
        }
        for message in messages {
            do throws(RequestRejection) {
                let request = try ClientRequest(frames: message, limits: limits)
                accepted += 1
                roundTrip(request, frames) { message throws(ProtocolError) in
                    do throws(RequestRejection) { return try ClientRequest(frames: message, limits: limits) } catch { throw error.error }
                } encode: { request throws(ProtocolError) in try request.frames() }
            } catch {
                // The coordinator answers every rejection: the answer must encode and read back.
                do {
                    let reply = try ClientReply(frames: try error.reply.frames())
                    check(reply == error.reply, "the rejection's reply reads back", frames)
                } catch {
                    fail("the reply to a rejected request does not encode: \(error)", frames)
                }
            }
        }
        return accepted
    }

    private static func clientReply(_ frames: [[UInt8]], _ limits: ProtocolLimits) -> Int {
        guard let reply = try? ClientReply(frames: frames, limits: limits) else { return 0 }
        roundTrip(reply, frames) { message throws(ProtocolError) in try ClientReply(frames: message, limits: limits) } encode: {
            reply throws(ProtocolError) in try reply.frames()
        }
        return 1
    }

    private static func workerMessage(_ frames: [[UInt8]], _ limits: ProtocolLimits) -> Int {
        do throws(ProtocolError) {
            let message = try WorkerMessage(frames: frames, limits: limits)
            roundTrip(message, frames) { message throws(ProtocolError) in try WorkerMessage(frames: message, limits: limits) } encode: {
                message throws(ProtocolError) in try message.frames()
            }
            return 1
        } catch {
            // The coordinator answers an invalid worker message with DISCONNECT carrying the error.
            let disconnect = CoordinatorMessage.disconnect(DisconnectBody(reason: "protocol error", error: error.body))
            do {
                check(try CoordinatorMessage(frames: try disconnect.frames()) == disconnect, "DISCONNECT reads back", frames)
            } catch {
                fail("the DISCONNECT answering an invalid worker message does not encode: \(error)", frames)
            }
            return 0
        }
    }

    private static func coordinatorMessage(_ frames: [[UInt8]], _ limits: ProtocolLimits) -> Int {
        guard let message = try? CoordinatorMessage(frames: frames, limits: limits) else { return 0 }
        roundTrip(message, frames) { message throws(ProtocolError) in try CoordinatorMessage(frames: message, limits: limits) } encode: {
            message throws(ProtocolError) in try message.frames()
        }
        return 1
    }

    private static func event(_ frames: [[UInt8]], _ limits: ProtocolLimits) -> Int {
        guard let event = try? Event(frames: frames, limits: limits) else { return 0 }
        roundTrip(event, frames) { message throws(ProtocolError) in try Event(frames: message, limits: limits) } encode: {
            event throws(ProtocolError) in try event.frames()
        }
        return 1
    }

    /// Encodes `value` and decodes the result: both must succeed and give `value` back.
    private static func roundTrip<T: Equatable>(
        _ value: T, _ input: [[UInt8]], decode: ([[UInt8]]) throws(ProtocolError) -> T,
        encode: (T) throws(ProtocolError) -> [[UInt8]]
    ) {
        do throws(ProtocolError) {
            let again = try decode(try encode(value))
            check(again == value, "decode(encode(message)) == message for \(T.self)", input)
        } catch {
            fail("an accepted \(T.self) does not survive a round trip: \(error)", input)
        }
    }

    private static func check(_ condition: Bool, _ property: String, _ input: [[UInt8]]) {
        if !condition { fail("property failed: \(property)", input) }
    }

    private static func fail(_ message: String, _ input: [[UInt8]]) -> Never {
        fatalError("\(message); input frames: \(input.map { $0.count })")
    }
}
