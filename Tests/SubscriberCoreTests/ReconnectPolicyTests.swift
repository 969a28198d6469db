import Foundation
import SubscriberCore
import Testing

/// Whether two durations differ by at most a microsecond (jittered delays go through `Double`).
private func approximatelyEqual(_ lhs: Duration, _ rhs: Duration) -> Bool {
    magnitude(lhs - rhs) <= .microseconds(1)
}

private func magnitude(_ duration: Duration) -> Duration { duration < .zero ? .zero - duration : duration }

@Suite("ReconnectPolicy")
struct ReconnectPolicyTests {
    @Test("fixed returns the same delay before every attempt", arguments: [1, 2, 3, 10, 100, 10_000])
    func fixedDelay(attempt: Int) {
        let policy = ReconnectPolicy.fixed(.seconds(10))
        #expect(policy.delay(beforeAttempt: attempt, random: { 0.999 }) == .seconds(10))
        #expect(ReconnectPolicy.fixed(.milliseconds(250)).delay(beforeAttempt: attempt) == .milliseconds(250))
    }

    @Test func defaultIsFullJitterFromOneSecondUpToTenForever() {
        #expect(ReconnectPolicy.default == .exponential(base: .seconds(1), max: .seconds(10), jitter: 1))
        #expect(ReconnectPolicy.default == ReconnectPolicy(parsing: "exponential:1:10"))
        #expect(ReconnectPolicy.default.maxAttempts == nil)
        #expect(ReconnectPolicy.default.delay(beforeAttempt: 1_000_000, random: { 0 }) == .seconds(10))
    }

    @Test(
        "the default: random(0, min(10 s, 1 s × 2^(n-1))) — the first attempt within a second",
        arguments: [
            // (attempt, random, expected): the delay is the cap times (1 - random), anywhere in (0, cap].
            (1, 0.0, Duration.seconds(1)), (1, 0.5, .milliseconds(500)), (1, 0.999, .milliseconds(1)),
            (2, 0.0, .seconds(2)), (2, 0.5, .seconds(1)),
            (3, 0.0, .seconds(4)), (3, 0.75, .seconds(1)),
            (4, 0.0, .seconds(8)), (4, 0.5, .seconds(4)),
            (5, 0.0, .seconds(10)), (5, 0.5, .seconds(5)),
            (50, 0.0, .seconds(10)), (50, 0.9, .seconds(1)),
        ])
    func defaultSchedule(attempt: Int, random: Double, expected: Duration) throws {
        let delay = try #require(ReconnectPolicy.default.delay(beforeAttempt: attempt, random: { random }))
        #expect(approximatelyEqual(delay, expected), "got \(delay), expected \(expected)")
    }

    @Test("the default's first attempt never waits more than a second, and its average is half a second")
    func firstAttemptBound() throws {
        var total = Duration.zero
        for step in 0..<1000 {
            let random = Double(step) / 1000
            let delay = try #require(ReconnectPolicy.default.delay(beforeAttempt: 1, random: { random }))
            #expect(delay > .zero && delay <= .seconds(1))
            total += delay
        }
        #expect(approximatelyEqual(total / 1000, .microseconds(500_500)))
    }

    @Test(
        "exponential doubles from base and stops at max (no jitter)",
        arguments: [
            (1, Duration.seconds(1)),
            (2, .seconds(2)),
            (3, .seconds(4)),
            (4, .seconds(8)),
            (5, .seconds(16)),
            (6, .seconds(30)),
            (7, .seconds(30)),
            (33, .seconds(30)),
            (34, .seconds(30)),
            (64, .seconds(30)),
            (1_000, .seconds(30)),
            (Int.max, .seconds(30)),
        ])
    func exponentialGrowth(attempt: Int, expected: Duration) {
        let policy = ReconnectPolicy.exponential(base: .seconds(1), max: .seconds(30), jitter: 0)
        #expect(policy.delay(beforeAttempt: attempt, random: { 0.999 }) == expected)
    }

    @Test(
        "exponential with a fractional base",
        arguments: [
            (1, Duration.milliseconds(500)),
            (2, .seconds(1)),
            (3, .seconds(2)),
            (4, .seconds(4)),
            (5, .seconds(8)),
            (6, .seconds(10)),
            (20, .seconds(10)),
        ])
    func exponentialFractionalBase(attempt: Int, expected: Duration) {
        let policy = ReconnectPolicy.exponential(base: .milliseconds(500), max: .seconds(10), jitter: 0)
        #expect(policy.delay(beforeAttempt: attempt) == expected)
    }

    @Test(
        "jitter removes up to `jitter` of the delay, driven by the injected random",
        arguments: [
            // (jitter, random, attempt, expected)
            (0.5, 0.0, 4, Duration.seconds(8)),
            (0.5, 0.999, 4, .milliseconds(4004)),
            (0.5, 0.5, 4, .seconds(6)),
            (1.0, 0.0, 3, .seconds(4)),
            (1.0, 0.999, 3, .milliseconds(4)),
            (0.25, 0.999, 10, .microseconds(22_507_500)),
            (0.0, 0.999, 2, .seconds(2)),
        ])
    func jitter(jitter: Double, random: Double, attempt: Int, expected: Duration) throws {
        let policy = ReconnectPolicy.exponential(base: .seconds(1), max: .seconds(30), jitter: jitter)
        let delay = try #require(policy.delay(beforeAttempt: attempt, random: { random }))
        #expect(approximatelyEqual(delay, expected), "got \(delay), expected \(expected)")
    }

    @Test("jittered delays stay within [capped * (1 - jitter), capped]", arguments: [0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 0.999])
    func jitterRange(random: Double) throws {
        let policy = ReconnectPolicy.exponential(base: .seconds(1), max: .seconds(30), jitter: 0.5)
        for attempt in 1...10 {
            let capped = min(Duration.seconds(1) * (1 << (attempt - 1)), .seconds(30))
            let delay = try #require(policy.delay(beforeAttempt: attempt, random: { random }))
            #expect(delay <= capped)
            #expect(delay >= capped * 0.5)
        }
    }

    @Test func jitterIsClampedToZeroThroughOne() {
        #expect(ReconnectPolicy.exponential(jitter: 2).strategy == .exponential(base: .seconds(1), max: .seconds(30), jitter: 1))
        #expect(ReconnectPolicy.exponential(jitter: -1).strategy == .exponential(base: .seconds(1), max: .seconds(30), jitter: 0))
        // With jitter clamped to 1 the delay never goes negative.
        let delay = ReconnectPolicy.exponential(jitter: 5).delay(beforeAttempt: 3, random: { 0.999 })
        #expect(delay.map { $0 >= .zero } == true)
    }

    @Test(
        "maxAttempts gives up after the limit",
        arguments: [
            (ReconnectPolicy.fixed(.seconds(1), maxAttempts: 3), 3),
            (.exponential(base: .seconds(1), max: .seconds(30), jitter: 0, maxAttempts: 5), 5),
            (.fixed(.zero, maxAttempts: 1), 1),
        ])
    func maxAttempts(policy: ReconnectPolicy, limit: Int) {
        for attempt in 1...limit {
            #expect(policy.delay(beforeAttempt: attempt, random: { 0 }) != nil, "attempt \(attempt)")
        }
        for attempt in [limit + 1, limit + 2, limit + 100] {
            #expect(policy.delay(beforeAttempt: attempt, random: { 0 }) == nil, "attempt \(attempt)")
        }
    }

    @Test func unlimitedNeverGivesUp() {
        let policy = ReconnectPolicy.exponential(base: .seconds(1), max: .seconds(2), jitter: 0)
        #expect(policy.delay(beforeAttempt: 1_000_000) == .seconds(2))
    }

    @Test(
        "description",
        arguments: [
            (ReconnectPolicy.fixed(.seconds(10)), "fixed(10.0 seconds)"),
            (.fixed(.seconds(10), maxAttempts: 3), "fixed(10.0 seconds), at most 3 attempts"),
            (
                .exponential(base: .seconds(1), max: .seconds(30), jitter: 0.5),
                "exponential(base: 1.0 seconds, max: 30.0 seconds, jitter: 0.5)"
            ),
        ])
    func description(policy: ReconnectPolicy, expected: String) {
        #expect(policy.description == expected)
    }

    @Test(
        "parsing accepts the CLI forms",
        arguments: [
            ("fixed:10", ReconnectPolicy.fixed(.seconds(10))),
            ("fixed:0.5", .fixed(.milliseconds(500))),
            ("fixed:0", .fixed(.zero)),
            ("fixed:10:attempts=3", .fixed(.seconds(10), maxAttempts: 3)),
            ("exponential:1:30", .exponential(base: .seconds(1), max: .seconds(30))),
            ("exponential:1:30:attempts=5", .exponential(base: .seconds(1), max: .seconds(30), maxAttempts: 5)),
            ("exponential:0.25:0.25", .exponential(base: .milliseconds(250), max: .milliseconds(250))),
            ("exponential:0.5:60:jitter=0.5", .exponential(base: .milliseconds(500), max: .seconds(60), jitter: 0.5)),
            ("exponential:1:10", .exponential(base: .seconds(1), max: .seconds(10), jitter: 1)),
            ("exponential:1:10:jitter=0", .exponential(base: .seconds(1), max: .seconds(10), jitter: 0)),
            ("exponential:1:10:jitter=0.25:attempts=4", .exponential(base: .seconds(1), max: .seconds(10), jitter: 0.25, maxAttempts: 4)),
        ])
    func parsingValid(text: String, expected: ReconnectPolicy) throws {
        let policy = try #require(ReconnectPolicy(parsing: text))
        #expect(policy == expected)
    }

    @Test(
        "parsing rejects malformed forms",
        arguments: [
            "fixed",
            "fixed:",
            "fixed:-1",
            "fixed:abc",
            "fixed:nan",
            "fixed:inf",
            "fixed:1:2",
            "fixed:1:attempts=0",
            "fixed:1:attempts=-2",
            "fixed:1:attempts=x",
            "fixed:1:attempts=",
            "exponential:30:1",
            "exponential:1",
            "exponential:1:2:3",
            "exponential:-1:30",
            "exponential:1:abc",
            "foo:1",
            "Fixed:1",
            "",
            ":",
            "attempts=3",
            " fixed:1",
            "fixed:1:jitter=0.5",
            "exponential:1:2:jitter=2",
            "exponential:1:2:jitter=-0.1",
            "exponential:1:2:attempts=3:jitter=0.5",
            "exponential:1:2:jitter=0.5:jitter=0.5",
            "exponential:1:2:attempts=3:attempts=3",
            "exponential:1:2:foo=1",
        ])
    func parsingInvalid(text: String) {
        #expect(ReconnectPolicy(parsing: text) == nil)
        #expect(throws: ReconnectPolicyFormatError.self) { try ReconnectPolicy(validating: text) }
    }

    @Test(
        "a malformed policy says what is wrong with it",
        arguments: [
            ("often", "expected fixed:SECONDS or exponential:BASE:MAX"),
            ("fixed:-1", "the delay must be seconds from 0 to 86400"),
            ("exponential:30:1", "BASE must not exceed MAX"),
            ("exponential:1:2:jitter=3", "jitter must be between 0 and 1"),
            ("fixed:1:attempts=0", "attempts must be a whole number above 0"),
            ("fixed:1:jitter=1", "jitter applies to exponential only"),
        ])
    func validationMessages(text: String, problem: String) {
        do {
            _ = try ReconnectPolicy(validating: text)
            Issue.record("\(text) was accepted")
        } catch {
            #expect(error.problem == problem)
            #expect(error.description.hasPrefix("\"\(text)\" is not a reconnect policy: \(problem)"))
        }
    }

    @Test("huge values are refused instead of overflowing", arguments: ["fixed:1e300", "fixed:1e16", "exponential:1:1e300", "fixed:86401"])
    func parsingAHugeValueReturnsNil(text: String) {
        #expect(ReconnectPolicy(parsing: text) == nil)
    }
}
