import SubscriberCore

/// An ``AuthSession`` a test controls: sign the user in or out, hand out a sequence of tokens, and see how often
/// (and whether with `forceRefresh`) credentials were asked for.
public final class ScriptedAuthSession: AuthSession, Sendable {
    private struct State {
        var signedIn = true
        var tokens: [AuthCredentials]
        var requests: [Bool] = []
        var failure: (any Error)?
    }

    private let state: Locked<State>

    /// Creates a signed-in session handing out `credentials` in order (the last one repeats; none: a test token).
    public init(_ credentials: AuthCredentials...) {
        state = Locked(State(tokens: credentials.isEmpty ? [.bearerToken("test-token")] : credentials))
    }

    /// Signs the user in or out.
    public func setSignedIn(_ signedIn: Bool) { state.withLock { $0.signedIn = signedIn } }

    /// Makes every later `credentials` call throw `error` (or succeed again with `nil`).
    public func failCredentials(with error: (any Error)?) { state.withLock { $0.failure = error } }

    /// The `forceRefresh` argument of every credentials request so far.
    public var credentialRequests: [Bool] { state.withLock { $0.requests } }

    /// Whether the user is signed in.
    public func isSignedIn() async -> Bool { state.withLock { $0.signedIn } }

    /// The next credentials in the sequence.
    public func credentials(forceRefresh: Bool) async throws -> AuthCredentials {
        try state.withLock { state in
            state.requests.append(forceRefresh)
            if let failure = state.failure { throw failure }
            return state.tokens.count > 1 ? state.tokens.removeFirst() : state.tokens[0]
        }
    }
}
