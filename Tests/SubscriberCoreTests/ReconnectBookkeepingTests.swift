import Testing

@testable import SubscriberCore

/// `ReconnectBookkeeping` on its own (issue 21): what follows each kind of ending, with a deterministic random source.
@Suite("ReconnectBookkeeping")
struct ReconnectBookkeepingTests {
    @Test("retryable endings back off per policy, attempt by attempt; an acknowledged connection starts again from 1")
    func backoffAndReset() {
        var bookkeeping = ReconnectBookkeeping(policy: .default, random: { 0.5 })
        #expect(bookkeeping.decide(after: .retryable) == .connectAfter(delay: .milliseconds(500), attempt: 1))
        #expect(bookkeeping.decide(after: .retryable) == .connectAfter(delay: .seconds(1), attempt: 2))
        #expect(bookkeeping.decide(after: .retryable) == .connectAfter(delay: .seconds(2), attempt: 3))
        bookkeeping.connected()
        #expect(bookkeeping.decide(after: .retryable) == .connectAfter(delay: .milliseconds(500), attempt: 1))
    }

    @Test("the random source drives the jitter: each decision asks it once")
    func randomSource() {
        let values = Locked([0.0, 0.75, 0.25])
        var bookkeeping = ReconnectBookkeeping(policy: .default, random: { values.withLock { $0.removeFirst() } })
        #expect(bookkeeping.decide(after: .retryable) == .connectAfter(delay: .seconds(1), attempt: 1))
        let second = bookkeeping.decide(after: .retryable)
        #expect(second == .connectAfter(delay: .milliseconds(500), attempt: 2))
        #expect(bookkeeping.decide(after: .retryable) == .connectAfter(delay: .seconds(3), attempt: 3))
    }

    @Test("an auth rejection is retried once at once with refreshed credentials; a second one stops: sessionExpired")
    func authRejection() {
        var bookkeeping = ReconnectBookkeeping(policy: .fixed(.seconds(10)))
        #expect(!bookkeeping.forceRefresh)
        #expect(bookkeeping.decide(after: .authRejected("expired")) == .connectNow)
        #expect(bookkeeping.forceRefresh)
        guard case .stop(.sessionExpired, .sessionExpired(let detail)) = bookkeeping.decide(after: .authRejected("expired")) else {
            Issue.record("a second refusal must stop")
            return
        }
        #expect(detail.contains("expired"))
    }

    @Test("an acknowledged connection forgets earlier auth rejections")
    func authRejectionReset() {
        var bookkeeping = ReconnectBookkeeping(policy: .fixed(.seconds(10)))
        #expect(bookkeeping.decide(after: .authRejected("a")) == .connectNow)
        bookkeeping.connected()
        #expect(!bookkeeping.forceRefresh)
        #expect(bookkeeping.decide(after: .authRejected("b")) == .connectNow)
    }

    @Test("a requested end is idle; a fatal one stops with its error")
    func requestedAndFatal() {
        var bookkeeping = ReconnectBookkeeping(policy: .default)
        #expect(bookkeeping.decide(after: .requested) == .idle)
        let error = RealtimeError.closedByServer(code: 4400, reason: "bad")
        #expect(bookkeeping.decide(after: .fatal(error)) == .stop(.failed(error), error))
    }

    @Test("the policy's attempt limit ends with reconnectAttemptsExhausted and the number of attempts made")
    func attemptLimit() {
        var bookkeeping = ReconnectBookkeeping(policy: .fixed(.seconds(1), maxAttempts: 2))
        #expect(bookkeeping.decide(after: .retryable) == .connectAfter(delay: .seconds(1), attempt: 1))
        #expect(bookkeeping.decide(after: .retryable) == .connectAfter(delay: .seconds(1), attempt: 2))
        #expect(bookkeeping.decide(after: .retryable) == .stop(.failed(.reconnectAttemptsExhausted(2)), .reconnectAttemptsExhausted(2)))
    }
}
