import Foundation
import RealtimeTesting
import Testing

@testable import SubscriberCore

/// A JWT with `payload` (JSON text) as its claims; the signature is not checked by the cache.
private func jwt(_ payload: String) -> String {
    func base64URL(_ text: String) -> String {
        Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
    return base64URL(#"{"alg":"HS256","typ":"JWT"}"#) + "." + base64URL(payload) + ".c2lnbmF0dXJl"
}

/// A token source that hands out `token-1`, `token-2`, ... (each a JWT expiring `ttl` after the fixture's clock) and
/// records each request's `forceRefresh`.
private final class TokenSource: Sendable {
    let now = Locked(Date(timeIntervalSince1970: 1_700_000_000))
    let ttl: TimeInterval?
    private let log = Locked<[Bool]>([])

    init(ttl: TimeInterval?) { self.ttl = ttl }

    var requests: [Bool] { log.withLock { $0 } }
    var clock: WallClock { WallClock { [now] in now.withLock { $0 } } }
    func advance(_ seconds: TimeInterval) { now.withLock { $0.addTimeInterval(seconds) } }

    func fetch(_ forceRefresh: Bool) -> String {
        let count = log.withLock { log in
            log.append(forceRefresh)
            return log.count
        }
        guard let ttl else { return jwt(#"{"sub":"token-\#(count)"}"#) }
        let exp = now.withLock { $0 }.timeIntervalSince1970 + ttl
        return jwt(#"{"sub":"token-\#(count)","exp":\#(exp)}"#)
    }
}

@Suite("JWTTokenCache")
struct JWTTokenCacheTests {
    static let expiries: [(token: String, expiry: TimeInterval?)] = [
        (jwt(#"{"exp":1700003600}"#), 1_700_003_600),
        (jwt(#"{"sub":"u","exp":1700003600.5,"iat":1}"#), 1_700_003_600.5),
        ("Bearer " + jwt(#"{"exp":42}"#), 42),
        (jwt(#"{"sub":"u"}"#), nil),  // no exp
        (jwt(#"{"exp":"1700003600"}"#), nil),  // exp not a number
        (jwt(#"{"exp":true}"#), nil),
        (jwt(#"{"exp":null}"#), nil),
        (jwt("[1,2]"), nil),  // payload not an object
        (jwt("not json"), nil),
        ("only.two", nil),
        ("a.b.c.d", nil),
        ("", nil),
        ("opaque-api-token", nil),
        ("eyJhbGciOiJIUzI1NiJ9.%%%.sig", nil),  // payload not base64url
        ("eyJhbGciOiJIUzI1NiJ9.eyJleHAiOjF9a.sig", nil),  // base64url of impossible length
    ]

    @Test("expiry(ofJWT:) reads a numeric exp from the base64url payload, and nothing else", arguments: expiries)
    func expiry(token: String, expiry: TimeInterval?) {
        #expect(JWTTokenCache.expiry(ofJWT: token) == expiry.map(Date.init(timeIntervalSince1970:)))
    }

    @Test("expiry(ofJWT:) accepts the payload with or without padding")
    func padding() {
        let payload = Data(#"{"exp":12}"#.utf8).base64EncodedString()  // "eyJleHAiOjEyfQ==" once padded
        #expect(payload.hasSuffix("="))
        #expect(JWTTokenCache.expiry(ofJWT: "h.\(payload).s") == Date(timeIntervalSince1970: 12))
    }

    @Test("a token is served from the cache until the margin before its exp, then fetched again")
    func cachesUntilShortlyBeforeExpiry() async throws {
        let source = TokenSource(ttl: 3600)
        let cache = JWTTokenCache(refreshMargin: .seconds(60), wallClock: source.clock) { source.fetch($0) }
        let first = try await cache.token()
        source.advance(3539)
        #expect(try await cache.token() == first)
        #expect(source.requests == [false])
        source.advance(1)  // 60 s before exp: refresh
        let second = try await cache.token()
        #expect(second != first)
        #expect(source.requests == [false, false])
    }

    @Test("forceRefresh bypasses the cache and is passed on to the source")
    func forceRefreshBypasses() async throws {
        let source = TokenSource(ttl: 3600)
        let cache = JWTTokenCache(wallClock: source.clock) { source.fetch($0) }
        let first = try await cache.token()
        let refreshed = try await cache.token(forceRefresh: true)
        #expect(refreshed != first)
        #expect(try await cache.token() == refreshed, "the refreshed token is cached")
        #expect(source.requests == [false, true])
    }

    @Test("tokens without a readable exp, or already inside the margin, are not cached", arguments: [nil, 30] as [TimeInterval?])
    func uncacheable(ttl: TimeInterval?) async throws {
        let source = TokenSource(ttl: ttl)
        let cache = JWTTokenCache(refreshMargin: .seconds(60), wallClock: source.clock) { source.fetch($0) }
        _ = try await cache.token()
        _ = try await cache.token()
        #expect(source.requests == [false, false])
    }

    private struct Down: Error {}

    @Test("a failed fetch is rethrown and clears the cache; invalidate() forgets the token")
    func failuresAndInvalidate() async throws {
        let source = TokenSource(ttl: 3600)
        let failing = Locked(false)
        let cache = JWTTokenCache(wallClock: source.clock) { forceRefresh in
            if failing.withLock({ $0 }) { throw Down() }
            return source.fetch(forceRefresh)
        }
        _ = try await cache.token()
        failing.withLock { $0 = true }
        await #expect(throws: Down.self) { try await cache.token(forceRefresh: true) }
        failing.withLock { $0 = false }
        _ = try await cache.token()
        #expect(source.requests == [false, false], "the failed refresh emptied the cache")
        await cache.invalidate()
        _ = try await cache.token()
        #expect(source.requests == [false, false, false])
    }

    @Test("callers arriving during a fetch share it")
    func concurrentCallersShareOneFetch() async throws {
        let source = TokenSource(ttl: 3600)
        let gate = OneShotSignal<Void>()
        let cache = JWTTokenCache(wallClock: source.clock) { forceRefresh in
            _ = await gate.wait()
            return source.fetch(forceRefresh)
        }
        let callers = (0..<6).map { _ in Task { try await cache.token() } }
        try await withTestTimeout(5, "five callers waiting for the first one's fetch") {
            while await cache.waiterCount < 5 { try await TestTime.pollPause() }
        }
        gate.fire()
        var tokens: Set<String> = []
        for caller in callers { tokens.insert(try await caller.boundedValue()) }
        #expect(tokens.count == 1)
        #expect(source.requests == [false])
    }

    @Test("a forced refresh does not take the token of an ordinary fetch under way: it fetches after it, forced")
    func forcedCallerDoesNotShareAnOrdinaryFetch() async throws {
        let source = TokenSource(ttl: 3600)
        let gate = OneShotSignal<Void>()
        let entered = Locked(0)
        let cache = JWTTokenCache(wallClock: source.clock) { forceRefresh in
            entered.withLock { $0 += 1 }
            _ = await gate.wait()
            return source.fetch(forceRefresh)
        }
        let ordinary = Task { try await cache.token() }
        try await withTestTimeout(5, "the ordinary fetch to start") {
            while entered.withLock({ $0 }) == 0 { try await TestTime.pollPause() }
        }
        let forced = Task { try await cache.token(forceRefresh: true) }
        try await withTestTimeout(5, "the forced caller to wait") {
            while await cache.waiterCount == 0 { try await TestTime.pollPause() }
        }
        gate.fire()
        let first = try await ordinary.boundedValue()
        let second = try await forced.boundedValue()
        #expect(first != second)
        #expect(source.requests == [false, true])
    }

    @Test("a caller waiting for a fetch that hangs ends with CancellationError as soon as it is cancelled")
    func cancelledWaiterStopsWaiting() async throws {
        let source = TokenSource(ttl: 3600)
        let gate = OneShotSignal<Void>()
        let entered = Locked(0)
        let cache = JWTTokenCache(wallClock: source.clock) { forceRefresh in
            entered.withLock { $0 += 1 }
            _ = await gate.wait()  // hangs until the end of the test
            return source.fetch(forceRefresh)
        }
        defer { gate.fire() }
        let fetching = Task { try await cache.token() }
        try await withTestTimeout(5, "the fetch to start") {
            while entered.withLock({ $0 }) == 0 { try await TestTime.pollPause() }
        }
        let waiter = Task { try await cache.token() }
        try await withTestTimeout(5, "the second caller to wait") {
            while await cache.waiterCount == 0 { try await TestTime.pollPause() }
        }
        waiter.cancel()
        let outcome = try await withTestTimeout(5, "the cancelled caller to end") { await waiter.result }
        #expect(throws: CancellationError.self) { try outcome.get() }
        #expect(await cache.waiterCount == 0, "the cancelled caller no longer waits")
        gate.fire()
        _ = try await fetching.boundedValue()
        #expect(source.requests == [false])
    }

    @Test("invalidate() disowns a fetch under way: its token is not cached, and later callers fetch again")
    func invalidateDisownsTheFetchUnderWay() async throws {
        let source = TokenSource(ttl: 3600)
        let gate = OneShotSignal<Void>()
        let entered = Locked(0)
        let cache = JWTTokenCache(wallClock: source.clock) { forceRefresh in
            let call = entered.withLock { entered in
                entered += 1
                return entered
            }
            if call == 1 { _ = await gate.wait() }  // the first user's fetch, held across the sign-out
            return source.fetch(forceRefresh)
        }
        defer { gate.fire() }
        let previousUser = Task { try await cache.token() }
        try await withTestTimeout(5, "the first fetch to start") {
            while entered.withLock({ $0 }) == 0 { try await TestTime.pollPause() }
        }
        let joined = Task { try await cache.token() }
        try await withTestTimeout(5, "a caller to join the first fetch") {
            while await cache.waiterCount == 0 { try await TestTime.pollPause() }
        }
        await cache.invalidate()
        // A caller after the sign-out does not join the first user's fetch: it fetches for itself.
        let nextUser = try await Task { try await cache.token() }.boundedValue(5)
        gate.fire()
        let previous = try await previousUser.boundedValue()
        #expect(nextUser != previous)
        #expect(try await joined.boundedValue() != previous, "a caller waiting at the sign-out does not get its token")
        #expect(try await cache.token() != previous, "the first fetch's token was not cached")
        #expect(source.requests.count >= 2)
    }
}
