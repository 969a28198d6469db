import Foundation

/// Caches a JWT (a Cognito or OIDC ID or access token) until shortly before it expires, for an ``AuthSession``:
///
/// ```swift
/// struct VortexAuthSession: AuthSession {
///     let tokens = JWTTokenCache { forceRefresh in try await vortexAuthService.idToken(forceRefresh: forceRefresh) }
///     func isSignedIn() async -> Bool { await vortexAuthService.isSignedIn }
///     func credentials(forceRefresh: Bool) async throws -> AuthCredentials {
///         .bearerToken(try await tokens.token(forceRefresh: forceRefresh))
///     }
/// }
/// ```
///
/// The expiry is the token's `exp` claim (``expiry(ofJWT:)``). A cached token is returned until `refreshMargin` before
/// it; after that, or with `forceRefresh: true` (the server refused the token), `fetch` is asked for a new one, with
/// the same `forceRefresh`. A token whose expiry cannot be read (not a JWT, no numeric `exp`), or which is already
/// within the margin of its expiry when fetched, is returned but not cached. The cache does not check signatures or
/// decide validity: the server does. A failed fetch is rethrown and clears the cache.
///
/// Callers that arrive while a fetch is under way wait for it and share its token, so a burst of subscribes costs
/// one fetch; a waiting caller that is cancelled stops waiting at once, whatever the fetch does. ``invalidate()``
/// also disowns a fetch under way: its token is neither cached nor shared, and later callers fetch anew. Tokens never
/// reach a log line or a description.
public actor JWTTokenCache {
    /// How long before its `exp` a cached token is replaced.
    public nonisolated let refreshMargin: Duration
    private let wallClock: WallClock
    private let fetch: @Sendable (_ forceRefresh: Bool) async throws -> String
    private var cached: (token: String, refreshAt: Date)?
    /// The fetch under way that callers may join; `nil` also once ``invalidate()`` disowned it.
    private var inFlight: (forced: Bool, done: OneShotSignal<Result<String, any Error>>)?
    /// Bumped by ``invalidate()``: a fetch started in an earlier generation caches nothing.
    private var generation = 0
    /// The callers waiting for a fetch (for tests).
    private var waiting = 0

    /// Creates a cache.
    /// - Parameters:
    ///   - refreshMargin: how long before its expiry a token is replaced (default 60 s; it should exceed the clock skew
    ///     between the device and the server, and the time a message takes to reach the server).
    ///   - wallClock: tells the time the expiry is compared with (inject one in tests).
    ///   - fetch: gets a token from the app's identity provider; `forceRefresh` says the last one was refused, so the
    ///     provider's own cache must be bypassed too.
    public init(
        refreshMargin: Duration = .seconds(60), wallClock: WallClock = .system,
        fetch: @escaping @Sendable (_ forceRefresh: Bool) async throws -> String
    ) {
        self.refreshMargin = refreshMargin
        self.wallClock = wallClock
        self.fetch = fetch
    }

    /// A token valid for at least `refreshMargin` more (as far as its `exp` tells), from the cache or fetched.
    /// - Parameter forceRefresh: `true` after the server refused the previous token: fetch a new one whatever the cache
    ///   holds.
    public func token(forceRefresh: Bool = false) async throws -> String {
        while true {
            if !forceRefresh, let cached, wallClock.now() < cached.refreshAt { return cached.token }
            if let flight = inFlight {
                // Share the fetch under way, unless this call needs a forced refresh and that fetch is not one: then
                // wait for it to end and fetch again. The wait ends at once if this caller is cancelled, so a fetch
                // that hangs holds only its own caller.
                let shared = flight.forced || !forceRefresh
                waiting += 1
                let outcome = await flight.done.wait()
                waiting -= 1
                guard let outcome else { throw CancellationError() }
                switch outcome {
                case .success(let token):
                    if shared { return token }
                case .failure(let error):
                    // Disowned by `invalidate()`, or failed because its caller was cancelled, not this one: fetch again.
                    let othersCancellation = error is CancellationError && !Task.isCancelled
                    if shared && !othersCancellation && !(error is Invalidated) { throw error }
                }
                continue
            }
            return try await fetchNow(forceRefresh: forceRefresh)
        }
    }

    private func fetchNow(forceRefresh: Bool) async throws -> String {
        let started = generation
        let done = OneShotSignal<Result<String, any Error>>()
        inFlight = (forceRefresh, done)
        let result: Result<String, any Error>
        do {
            result = .success(try await fetch(forceRefresh))
        } catch {
            result = .failure(error)
        }
        // After `invalidate()` this fetch is no longer the cache's: `inFlight` may be a newer fetch, and the token may
        // be the previous user's. Only this call's own caller gets it.
        if generation == started {
            cached = nil
            if case .success(let token) = result, let expiry = Self.expiry(ofJWT: token) {
                let refreshAt = expiry.addingTimeInterval(-refreshMargin.timeInterval)
                if wallClock.now() < refreshAt { cached = (token, refreshAt) }
            }
            inFlight = nil
        }
        done.fire(result)
        return try result.get()
    }

    /// How many callers wait for a fetch under way (for tests).
    var waiterCount: Int { waiting }

    /// Forgets the cached token (for example at sign-out), so the next call fetches. A fetch under way is disowned: its
    /// token is not cached, callers waiting for it fetch again, and later callers do not join it.
    public func invalidate() {
        generation += 1
        cached = nil
        inFlight?.done.fire(.failure(Invalidated()))
        inFlight = nil
    }

    /// What the waiters of a fetch disowned by ``invalidate()`` are told: fetch again.
    private struct Invalidated: Error {}

    /// The `exp` claim of a JWT (`header.payload.signature`, each part base64url-encoded, padding optional; a
    /// leading `Bearer ` is ignored): the payload's `exp` as seconds since 1970 (integer or fraction). `nil` when the
    /// text is not a JWT, the payload is not a JSON object, or `exp` is missing, not a number, or not finite.
    public static func expiry(ofJWT token: String) -> Date? {
        let bare = token.hasPrefix("Bearer ") ? token.dropFirst("Bearer ".count) : Substring(token)
        let parts = bare.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = decodeBase64URL(parts[1]) else { return nil }
        struct Claims: Decodable { var exp: Double }
        guard let claims = try? JSONDecoder().decode(Claims.self, from: payload), claims.exp.isFinite else { return nil }
        return Date(timeIntervalSince1970: claims.exp)
    }

    /// Base64url (RFC 4648 §5) with or without padding; `nil` when malformed.
    private static func decodeBase64URL(_ text: Substring) -> Data? {
        guard !text.isEmpty, text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "=") })
        else { return nil }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.hasSuffix("=") { base64.removeLast() }
        let remainder = base64.count % 4
        if remainder == 1 { return nil }
        if remainder > 0 { base64 += String(repeating: "=", count: 4 - remainder) }
        return Data(base64Encoded: base64)
    }
}
