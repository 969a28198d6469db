/// The reconnect decisions both transports share: count attempts, back off per policy, allow one immediate retry
/// with refreshed credentials after an auth rejection, retry a session that threw a few times, and know when to stop.
package struct ReconnectBookkeeping: Sendable {
    /// How a connection (or an attempt to open one) ended, as far as reconnecting is concerned.
    package enum Ending: Sendable, Equatable {
        /// The client closed it on purpose.
        case requested
        /// The server refused the credentials.
        case authRejected(String)
        /// The server closed for a reason the protocol defines as final.
        case fatal(RealtimeError)
        /// Anything else: the network, a timeout, a server close that may pass.
        case retryable
        /// The ``AuthSession`` threw instead of giving credentials (`error`, its `sessionExpired`): backed off as
        /// ``retryable`` up to ``credentialsRetries`` times in a row.
        case credentialsUnavailable(RealtimeError)
    }

    /// What to do next.
    package enum Decision: Sendable, Equatable {
        /// Connect again now (with refreshed credentials: see ``forceRefresh``).
        case connectNow
        /// Wait `delay` (attempt number `attempt`), then connect.
        case connectAfter(delay: Duration, attempt: Int)
        /// Stop and end every stream with `error`.
        case stop(DisconnectReason, RealtimeError)
        /// Nothing to do: the client asked for the end.
        case idle
    }

    private let policy: ReconnectPolicy
    private let random: @Sendable () -> Double
    private var attempt = 0
    private var authRejections = 0
    private var credentialsFailures = 0

    /// How many times in a row a session that threw is retried before the transport stops with `sessionExpired`. An
    /// identity provider throws for reasons that pass (offline, DNS not ready yet: Amplify's `fetchAuthSession` fails
    /// so) as well as for good (the refresh token expired); five backoffs (12.5 s expected with the default policy)
    /// outlast the first, and the second is still reported within seconds.
    package static let credentialsRetries = 5

    /// Creates bookkeeping for `policy`; `random` (values in `0..<1`) drives the policy's jitter.
    package init(policy: ReconnectPolicy, random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }) {
        self.policy = policy
        self.random = random
    }

    /// Whether the next credentials request should bypass caches (the last ones were refused).
    package var forceRefresh: Bool { authRejections > 0 }

    /// A connection was acknowledged: the attempts start again if it lasted (`restartingBackoff`: one that ends right
    /// after its ack is one more failed attempt), the auth refusals if it proved its credentials (a server that
    /// acknowledges and then refuses at once has not accepted them).
    package mutating func connected(provingCredentials: Bool = true, restartingBackoff: Bool = true) {
        if restartingBackoff { attempt = 0 }
        if provingCredentials { authRejections = 0 }
    }

    /// Decides what follows `ending`. Any other ending (the session answered, or did not in time) ends a run of
    /// ``Ending/credentialsUnavailable(_:)``.
    package mutating func decide(after ending: Ending) -> Decision {
        if case .credentialsUnavailable = ending { credentialsFailures += 1 } else { credentialsFailures = 0 }
        switch ending {
        case .requested:
            return .idle
        case .fatal(let error):
            return .stop(.failed(error), error)
        case .authRejected(let detail):
            authRejections += 1
            guard authRejections <= 1 else {
                return .stop(.sessionExpired, .sessionExpired("credentials refused again after a refresh: \(detail)"))
            }
            return .connectNow
        case .credentialsUnavailable(let error) where credentialsFailures > Self.credentialsRetries:
            return .stop(.sessionExpired, error)
        case .retryable, .credentialsUnavailable:
            attempt += 1
            guard let delay = policy.delay(beforeAttempt: attempt, random: random) else {
                let made = attempt - 1
                return .stop(.failed(.reconnectAttemptsExhausted(made)), .reconnectAttemptsExhausted(made))
            }
            return .connectAfter(delay: delay, attempt: attempt)
        }
    }
}
