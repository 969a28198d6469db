import Logging

/// The connect / run / back off loop both transports share, run on the calling transport actor.
///
/// Before every attempt it checks that a connection is still wanted, asks ``AuthSession/isSignedIn()`` and fetches
/// credentials anew (forcing a refresh after an auth rejection); the transport's `attempt` opens, runs and reports
/// how the connection ended; ``ReconnectBookkeeping`` decides what follows.
public struct ConnectionSupervisor: Sendable {
    /// What one attempt achieved.
    public struct Outcome: Sendable {
        /// Whether the protocol acknowledged the connection (the attempt counters then start again).
        public var acknowledged: Bool
        /// How it ended.
        public var ending: ReconnectBookkeeping.Ending
        /// A description for the log.
        public var detail: String

        /// Creates an outcome.
        public init(acknowledged: Bool, ending: ReconnectBookkeeping.Ending, detail: String) {
            self.acknowledged = acknowledged
            self.ending = ending
            self.detail = detail
        }
    }

    let policy: ReconnectPolicy
    let auth: any AuthSession
    let clock: any Clock<Duration>
    let states: ConnectionStateBroadcaster
    let logger: Logger

    /// Creates a supervisor.
    public init(policy: ReconnectPolicy, auth: any AuthSession, clock: any Clock<Duration>, states: ConnectionStateBroadcaster, logger: Logger) {
        self.policy = policy
        self.auth = auth
        self.clock = clock
        self.states = states
        self.logger = logger
    }

    /// Runs until nothing needs a connection, the transport is superseded (`isCurrent` false), or it must stop.
    /// - Parameters:
    ///   - isCurrent: `false` once `disconnect()` superseded this loop: it then returns without touching anything.
    ///   - wantsConnection: whether anything still needs the connection.
    ///   - attempt: opens a connection with the credentials, runs it until it ends, and says how.
    ///   - stop: ends every stream with the error (signed out, session expired, the policy gave up).
    ///   - isolation: the transport actor the loop runs on (inherited from the caller).
    public func run(
        isCurrent: () -> Bool,
        wantsConnection: () -> Bool,
        attempt: (AuthCredentials) async -> Outcome,
        stop: (DisconnectReason, RealtimeError) -> Void,
        isolation: isolated (any Actor)? = #isolation
    ) async {
        var bookkeeping = ReconnectBookkeeping(policy: policy)
        var backoff: (delay: Duration, attempt: Int)?
        while isCurrent() && !Task.isCancelled {
            guard wantsConnection() else {
                states.update(.idle)
                return
            }
            if let (delay, number) = backoff {
                backoff = nil
                states.update(.reconnecting(attempt: number, delay: delay))
                logger.info("reconnecting", metadata: ["attempt": "\(number)", "delay": "\(delay)"])
                do { try await clock.sleep(for: delay, tolerance: nil) } catch { return }
                guard isCurrent() else { return }
                guard wantsConnection() else { continue }
            }
            guard await auth.isSignedIn() else {
                if isCurrent() { stop(.signedOut, .signedOut) }
                return
            }
            guard isCurrent() else { return }
            states.update(.connecting)
            let credentials: AuthCredentials
            do {
                credentials = try await auth.credentials(forceRefresh: bookkeeping.forceRefresh)
            } catch {
                if isCurrent() { stop(.sessionExpired, .sessionExpired("credentials unavailable: \(error)")) }
                return
            }
            guard isCurrent() else { return }
            let outcome = await attempt(credentials)
            guard isCurrent(), !Task.isCancelled else { return }
            if outcome.acknowledged { bookkeeping.connected() }
            logger.info("connection ended", metadata: ["reason": "\(outcome.detail)"])
            switch bookkeeping.decide(after: outcome.ending) {
            case .idle, .connectNow:
                continue
            case .connectAfter(let delay, let number):
                backoff = (delay, number)
            case .stop(let reason, let error):
                stop(reason, error)
                return
            }
        }
    }
}
