import Testing
import TactusProtocol

/// SplitMix64: a small seeded generator, so every run mutates the same way.
private struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A cheap, deterministic stand-in for the libFuzzer target of issue 6: valid messages with
/// bytes flipped, frames cut, dropped, duplicated and swapped must decode or fail with a
/// ``ProtocolError``, never trap.
@Suite("Mutated messages") struct MutationTests {
    static let corpus: [[[UInt8]]] = {
        var corpus: [[[UInt8]]] = []
        corpus += Examples.requests.compactMap { try? $0.frames() }
        corpus += Examples.responses.compactMap { try? ClientReply(requestID: [1], $0).frames() }
        corpus += Examples.workerMessages.compactMap { try? $0.frames() }
        corpus += Examples.coordinatorMessages.compactMap { try? $0.frames() }
        corpus += Examples.events.compactMap { try? $0.frames() }
        return corpus
    }()

    private static func mutate(_ message: [[UInt8]], using random: inout SeededGenerator) -> [[UInt8]] {
        var frames = message
        for _ in 0..<Int.random(in: 1...4, using: &random) {
            guard !frames.isEmpty else { return frames }
            let index = Int.random(in: 0..<frames.count, using: &random)
            switch Int.random(in: 0..<7, using: &random) {
            case 0 where !frames[index].isEmpty:
                let byte = Int.random(in: 0..<frames[index].count, using: &random)
                frames[index][byte] ^= UInt8(1 << Int.random(in: 0..<8, using: &random))
            case 1:
                frames[index] = Array(frames[index].prefix(Int.random(in: 0...frames[index].count, using: &random)))
            case 2: frames.remove(at: index)
            case 3: frames.insert(frames[index], at: index)
            case 4: frames.swapAt(index, Int.random(in: 0..<frames.count, using: &random))
            case 5 where !frames[index].isEmpty:
                let byte = Int.random(in: 0..<frames[index].count, using: &random)
                frames[index][byte] = [0x22, 0x7B, 0x7D, 0x5B, 0x5D, 0x2C, 0x3A, 0x00, 0xFF, 0x30].randomElement(using: &random)!
            default:
                frames[index] += (0..<Int.random(in: 1...8, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            }
        }
        return frames
    }

    @Test func mutatedMessagesDecodeOrFailWithTypedErrors() {
        var random = SeededGenerator(state: 0x5EED_7AC7)
        var decoded = 0, rejected = 0
        for _ in 0..<4000 {
            let frames = Self.mutate(Self.corpus.randomElement(using: &random)!, using: &random)
            let outcomes: [Bool] = [
                (try? ClientRequest(frames: frames)) != nil,
                (try? ClientReply(frames: frames)) != nil,
                (try? WorkerMessage(frames: frames)) != nil,
                (try? CoordinatorMessage(frames: frames)) != nil,
                (try? Event(frames: frames)) != nil,
            ]
            if outcomes.contains(true) { decoded += 1 } else { rejected += 1 }
        }
        // Both outcomes occur: the mutations reach past the first frame checks.
        #expect(decoded > 100)
        #expect(rejected > 1000)
    }
}
