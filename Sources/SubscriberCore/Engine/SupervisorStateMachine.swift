/// The decisions of a transport's ``LinkSupervisor`` as a pure state machine, in the style of ``LinkStateMachine``:
/// every input (a request, a network path, a link's end, an elapsed backoff) is a method that changes one ``State`` and
/// returns the ``Action``s the supervisor's shell performs. No tasks, no clock: tested by table.
///
/// It decides when to open a primary link (only when the transport wants a connection and the path is usable), when to
/// back off and for how long (``ReconnectBookkeeping`` and its policy's jitter), when to skip the backoff (the network
/// is back, the interface or its gateways changed, the app asked to verify the connection), when to probe the open links, when to open
/// a rotation's successor, and when to stop for good (signed out, credentials unavailable too often, refused twice,
/// attempts exhausted).
package struct SupervisorStateMachine: Sendable {
    /// Where the supervisor is. Exactly one of these holds at a time.
    package enum State: Sendable, Equatable {
        /// No connection is wanted (or none was asked for yet).
        case idle
        /// A primary link is under way: connecting, or open.
        case linked
        /// Waiting for the backoff numbered `id` to elapse before the next attempt.
        case backingOff(id: Int)
        /// A connection is wanted, but the network path is unsatisfied: it is made as soon as the path is satisfied.
        case waitingForPath
        /// Stopped for good: every input is ignored.
        case stopped
    }

    /// What the shell does, in order.
    package enum Action: Sendable, Equatable {
        /// Publish a connection state.
        case report(ConnectionState)
        /// Ask for credentials (bypassing caches if `forceRefresh`) and open link `id` in `role`.
        case startLink(id: Int, role: LinkRole, forceRefresh: Bool)
        /// Sleep `delay`, then report ``SupervisorStateMachine/backoffElapsed(id:wantsConnection:)`` for `id`.
        case startBackoff(id: Int, delay: Duration, attempt: Int)
        /// End the backoff sleep `id` early (its end is then ignored).
        case cancelBackoff(id: Int)
        /// Probe every open link with the short probe timeout.
        case probeOpenLinks(because: Reason)
        /// The network path changed (logged).
        case pathChanged(from: NetworkPath, to: NetworkPath)
        /// No network: the wanted connection (a reconnect after a loss, if `reconnecting`) waits for it (logged).
        case waitForNetwork(reconnecting: Bool)
        /// A wait (a backoff, or for the network) is skipped: connecting now (logged).
        case skipWait(because: Reason)
        /// Stop the transport with `error`, and end the supervisor.
        case stop(DisconnectReason, RealtimeError)
        /// End the supervisor (nobody can ask it for anything any more).
        case finish
    }

    /// Why a wait is skipped or the links are probed.
    package enum Reason: String, Sendable, Equatable {
        case verifyConnection = "verifyConnection"
        case networkBack = "the network is back"
        case interfaceChanged = "the network interface changed"
        /// Same kind of interface, other gateways: another Wi-Fi network, say.
        case gatewaysChanged = "the network's gateways changed"
    }

    package private(set) var state = State.idle
    /// The last network path reported; `nil` before the first (assumed usable, as without a monitor).
    package private(set) var path: NetworkPath?
    private var bookkeeping: ReconnectBookkeeping
    private var nextLinkID = 0
    private var nextBackoffID = 0

    /// Creates a machine that backs off per `policy`; `random` (values in `0..<1`) drives its jitter.
    package init(policy: ReconnectPolicy, random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }) {
        bookkeeping = ReconnectBookkeeping(policy: policy, random: random)
    }

    private var pathSatisfied: Bool { path?.isSatisfied ?? true }

    // MARK: Inputs

    /// The supervisor starts.
    package mutating func start(wantsConnection: Bool) -> [Action] {
        connectIfWanted(wantsConnection)
    }

    /// Something started or stopped needing a connection.
    package mutating func demandChanged(wantsConnection: Bool) -> [Action] {
        switch state {
        case .idle, .waitingForPath: connectIfWanted(wantsConnection)
        // Idle means asleep: no backoff timer for a connection nobody wants.
        case .backingOff(let id) where !wantsConnection: [.cancelBackoff(id: id)] + connectIfWanted(false)
        case .linked, .backingOff, .stopped: []
        }
    }

    /// The primary link reached its rotation lead: open a successor (only while a primary is under way).
    package mutating func rotationDue() -> [Action] {
        guard state == .linked else { return [] }
        return [.startLink(id: takeLinkID(), role: .successor, forceRefresh: bookkeeping.forceRefresh)]
    }

    /// The app asks that the connection be verified (foreground): probe the open links, and stop waiting to reconnect,
    /// once, even without a network path. The path read after the app's process resumes can be stale, with no update
    /// coming (WebKit PR #60909 gates its tasks on a fresh path, with a timeout for the update that does not come), and
    /// a monitor can read unsatisfied while there is a network (netbirdio/ios-client #42: a Wi-Fi–cellular swap). An
    /// attempt that fails without a network waits for it again.
    package mutating func verifyConnection(wantsConnection: Bool) -> [Action] {
        guard state != .stopped else { return [] }
        return [.probeOpenLinks(because: .verifyConnection)] + skipWait(.verifyConnection, wantsConnection)
    }

    /// The network path monitor reported `new`.
    package mutating func pathChanged(to new: NetworkPath, wantsConnection: Bool) -> [Action] {
        let old = path
        path = new
        guard state != .stopped, let old, old != new else { return [] }
        var actions: [Action] = [.pathChanged(from: old, to: new)]
        if !new.isSatisfied {
            // No attempts and no timer while there is no network; the wanted connection waits for it.
            if case .backingOff(let id) = state {
                state = .waitingForPath
                actions += [.cancelBackoff(id: id), .waitForNetwork(reconnecting: true)]
            }
        } else if !old.isSatisfied {
            actions += skipWait(.networkBack, wantsConnection) + [.probeOpenLinks(because: .networkBack)]
        } else if old.isAnotherNetwork(than: new) {
            let reason = old.interface != new.interface ? Reason.interfaceChanged : .gatewaysChanged
            actions += [.probeOpenLinks(because: reason)] + skipWait(reason, wantsConnection)
        }
        return actions
    }

    /// How long an acknowledged link must have lasted for a later auth refusal to count as a new episode (a token
    /// that expired or was revoked) rather than the refreshed credentials refused again.
    package static let credentialsProvenAfter = Duration.seconds(30)

    /// How long an acknowledged link must have lasted for the backoff to start again from the first attempt: a link
    /// that ends right after its ack (a server that acks and drops, a frame that breaks the protocol) is one more
    /// failed attempt, or the transport would reconnect within a second for ever.
    package static let backoffRestartsAfter = Duration.seconds(30)

    /// Link `id` ended; `loss` is what the transport made of it, `acknowledged` whether the link was ever open, and
    /// `lasted` how long it ran from the attempt on.
    package mutating func linkEnded(loss: LinkLoss, acknowledged: Bool, lasted: Duration = .zero, wantsConnection: Bool) -> [Action] {
        guard state != .stopped, case .lost(let ending) = loss else { return [] }
        state = .idle
        if acknowledged {
            // Acknowledged and refused at once (some servers check a token only after the ack): without this, each
            // acknowledgement would reset the one retry and the transport would reconnect at once for ever.
            let refusedAtOnce = if case .authRejected = ending { lasted < Self.credentialsProvenAfter } else { false }
            bookkeeping.connected(provingCredentials: !refusedAtOnce, restartingBackoff: lasted >= Self.backoffRestartsAfter)
        }
        return follow(bookkeeping.decide(after: ending), wantsConnection)
    }

    /// The backoff sleep `id` ended (elapsed, or cancelled earlier: then it is no longer the current one).
    package mutating func backoffElapsed(id: Int, wantsConnection: Bool) -> [Action] {
        guard state == .backingOff(id: id) else { return [] }
        return connectIfWanted(wantsConnection)
    }

    /// A primary link got no credentials: `error` is ``RealtimeError/signedOut`` (stop), or the `sessionExpired` the
    /// session's throw became: backed off and retried (``ReconnectBookkeeping/credentialsRetries``), or, without a
    /// network, waiting for it uncounted (the throw may be just that).
    package mutating func noCredentials(_ error: RealtimeError, wantsConnection: Bool) -> [Action] {
        guard state != .stopped else { return [] }
        guard error != .signedOut else {
            state = .stopped
            return [.stop(.signedOut, error)]
        }
        state = .idle
        guard pathSatisfied else { return connectIfWanted(wantsConnection) }
        return follow(bookkeeping.decide(after: .credentialsUnavailable(error)), wantsConnection)
    }

    /// The transport's request stream ended (the transport is gone).
    package mutating func requestsEnded() -> [Action] {
        guard state != .stopped else { return [] }
        state = .stopped
        return [.finish]
    }

    // MARK: Decisions

    /// Carries out what the bookkeeping decided after a primary link ended (or got no credentials).
    private mutating func follow(_ decision: ReconnectBookkeeping.Decision, _ wantsConnection: Bool) -> [Action] {
        switch decision {
        case .idle, .connectNow:
            let actions = connectIfWanted(wantsConnection)
            // No network for the reconnect: the lost link's `connected` must not stand while nothing is linked.
            return state == .waitingForPath ? [.report(.connecting), .waitForNetwork(reconnecting: true)] : actions
        case .connectAfter(let delay, let attempt):
            // Nothing wanted: idle at once, with no timer and no `reconnecting` for a connection nobody wants.
            guard wantsConnection else { return connectIfWanted(false) }
            let reconnecting = Action.report(.reconnecting(attempt: attempt, delay: delay))
            guard pathSatisfied else {
                state = .waitingForPath
                return [reconnecting, .waitForNetwork(reconnecting: true)]
            }
            let id = nextBackoffID
            nextBackoffID += 1
            state = .backingOff(id: id)
            return [reconnecting, .startBackoff(id: id, delay: delay, attempt: attempt)]
        case .stop(let reason, let error):
            state = .stopped
            return [.stop(reason, error)]
        }
    }

    private mutating func connectIfWanted(_ wantsConnection: Bool, evenWithoutPath: Bool = false) -> [Action] {
        guard wantsConnection else {
            state = .idle
            return [.report(.idle)]
        }
        guard pathSatisfied || evenWithoutPath else {
            defer { state = .waitingForPath }
            return state == .waitingForPath ? [] : [.waitForNetwork(reconnecting: false)]
        }
        state = .linked
        return [.report(.connecting), .startLink(id: takeLinkID(), role: .primary, forceRefresh: bookkeeping.forceRefresh)]
    }

    /// A supervisor waiting to reconnect (backing off, or for the network) connects now; otherwise nothing.
    /// Every other reason comes with a satisfied path: only `verifyConnection` connects without one (see there).
    private mutating func skipWait(_ reason: Reason, _ wantsConnection: Bool) -> [Action] {
        switch state {
        case .backingOff(let id):
            return [.cancelBackoff(id: id), .skipWait(because: reason)] + connectIfWanted(wantsConnection)
        case .waitingForPath:
            return [.skipWait(because: reason)] + connectIfWanted(wantsConnection, evenWithoutPath: true)
        case .idle, .linked, .stopped:
            return []
        }
    }

    private mutating func takeLinkID() -> Int {
        defer { nextLinkID += 1 }
        return nextLinkID
    }
}
