import Foundation
import Logging
import NIOCore
import Testing

@testable import TactusWeb

/// The count of wrong tokens per client, on its own: when a client is refused, for how long,
/// and what counts as one client.
@Suite struct TokenGuessesTests {
    let start = ContinuousClock.now

    @Test func theEleventhTryWithinAMinuteIsRefusedUntilTheFirstFailureIsAMinuteOld() {
        let guesses = TokenGuesses()
        for second in 0..<TokenGuesses.allowed {
            #expect(guesses.refusedUntil("10.0.0.1", now: start + .seconds(second)) == nil)
            guesses.failed("10.0.0.1", now: start + .seconds(second))
        }
        #expect(guesses.refusedUntil("10.0.0.1", now: start + .seconds(30)) == start + .seconds(60))
        #expect(guesses.refusedUntil("10.0.0.2", now: start + .seconds(30)) == nil, "another client is not refused")
        // When the first failure is a minute old, one more try is allowed, then refused until the second is.
        #expect(guesses.refusedUntil("10.0.0.1", now: start + .seconds(60)) == nil)
        guesses.failed("10.0.0.1", now: start + .seconds(60))
        #expect(guesses.refusedUntil("10.0.0.1", now: start + .seconds(60)) == start + .seconds(61))
    }

    @Test func theRightTokenClearsTheCount() {
        let guesses = TokenGuesses()
        for _ in 0..<(TokenGuesses.allowed - 1) { guesses.failed("10.0.0.1", now: start) }
        guesses.succeeded("10.0.0.1")
        guesses.failed("10.0.0.1", now: start)
        #expect(guesses.refusedUntil("10.0.0.1", now: start) == nil)
    }

    @Test func checkRefusesWithoutCheckingOnceTheTriesAreUsed() throws {
        let guesses = TokenGuesses()
        let address = try SocketAddress(ipAddress: "192.0.2.7", port: 4000)
        let logger = Logger(label: "test")
        for _ in 0..<TokenGuesses.allowed {
            guard case .wrong = guesses.check("guess", against: "the-right-token-1234", from: address, logger: logger) else {
                Issue.record("a wrong token was not counted as wrong")
                return
            }
        }
        guard case .refused(let failure) = guesses.check("the-right-token-1234", against: "the-right-token-1234", from: address, logger: logger)
        else {
            Issue.record("the eleventh try was checked")
            return
        }
        #expect(failure.status == .tooManyRequests && failure.body.code == .busy)
        #expect((failure.body.retryAfterMs ?? 0) >= 1000 && (failure.body.retryAfterMs ?? 0) <= 60_000)
        #expect(failure.body.message.contains("too many wrong tokens"))
    }

    @Test func anIPv6HostCountsByItsNetworkAndAMappedIPv4AddressAsItself() throws {
        let one = TokenGuesses.client(try SocketAddress(ipAddress: "2001:db8:1:2::1", port: 1))
        let other = TokenGuesses.client(try SocketAddress(ipAddress: "2001:db8:1:2:ffff::9", port: 1))
        let elsewhere = TokenGuesses.client(try SocketAddress(ipAddress: "2001:db8:1:3::1", port: 1))
        #expect(one == other && one != elsewhere)
        #expect(TokenGuesses.client(try SocketAddress(ipAddress: "::ffff:192.0.2.7", port: 1)) == "192.0.2.7")
        #expect(TokenGuesses.client(try SocketAddress(ipAddress: "::ffff:192.0.2.8", port: 1)) == "192.0.2.8")
        #expect(TokenGuesses.client(try SocketAddress(ipAddress: "192.0.2.7", port: 1)) == "192.0.2.7")
        #expect(TokenGuesses.client(nil) == "local")
    }
}
