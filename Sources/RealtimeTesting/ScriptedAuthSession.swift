import SubscriberCore

/// An ``AuthSession`` a test controls: sign the user in or out, hand out a sequence of tokens (or change it at any
/// time), hold credential requests unanswered, and see how often (and whether with `forceRefresh`) credentials were
/// asked for.
public final class ScriptedAuthSession: AuthSession, Sendable {
    private struct State {
        var signedIn = true
        var tokens: [AuthCredentials]
        var requests: [Bool] = []
        var failure: (any Error)?
        var holding = false
        var held: [CheckedContinuation<Void, Never>] = []
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

    /// Replaces the sequence handed out from now on (the last one repeats), as when the app's token was refreshed.
    public func setCredentials(_ credentials: AuthCredentials...) {
        state.withLock { $0.tokens = credentials.isEmpty ? [.bearerToken("test-token")] : credentials }
    }

    /// From now on, every `credentials` call is recorded and then waits, ignoring cancellation as a hung identity
    /// provider would, until ``releaseCredentials()``.
    public func holdCredentials() { state.withLock { $0.holding = true } }

    /// Answers every held `credentials` call (with the credentials current at that moment) and stops holding.
    public func releaseCredentials() {
        let held = state.withLock { state in
            state.holding = false
            defer { state.held = [] }
            return state.held
        }
        for call in held { call.resume() }
    }

    /// How many `credentials` calls are held right now.
    public var heldCount: Int { state.withLock { $0.held.count } }

    /// Waits (in real time, polling) until at least `count` calls are held.
    /// - Throws: ``TestTimeoutError`` if that does not happen within `timeout` seconds.
    public func waitForHeldCalls(_ count: Int = 1, timeout: Double = scriptedWait) async throws {
        try await withTestTimeout(timeout, "\(count) held credentials call(s)") { [state] in
            while state.withLock({ $0.held.count }) < count { try await TestTime.pollPause() }
        }
    }

    /// The `forceRefresh` argument of every credentials request so far.
    public var credentialRequests: [Bool] { state.withLock { $0.requests } }

    /// Whether the user is signed in.
    public func isSignedIn() async -> Bool { state.withLock { $0.signedIn } }

    /// The next credentials in the sequence (after a hold, if one is set).
    public func credentials(forceRefresh: Bool) async throws -> AuthCredentials {
        let hold = state.withLock { state in
            state.requests.append(forceRefresh)
            return state.holding
        }
        if hold {
            await withCheckedContinuation { (call: CheckedContinuation<Void, Never>) in
                let answerNow = state.withLock { state in
                    guard state.holding else { return true }
                    state.held.append(call)
                    return false
                }
                if answerNow { call.resume() }
            }
        }
        return try state.withLock { state in
            if let failure = state.failure { throw failure }
            return state.tokens.count > 1 ? state.tokens.removeFirst() : state.tokens[0]
        }
    }
}
