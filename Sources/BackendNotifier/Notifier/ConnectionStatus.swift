import Foundation
import Logging
import SubscriberCore

/// The connection picture inside ``NotifierStateMachine``, a pure state machine of its own: it follows the active
/// transport's connection states, derives the public state from them and from what the notifier says about itself,
/// and keeps the network-error limit (one `networkError` per outage, after `networkErrorAfter` without a live
/// connection while upstreams wait for one).
///
/// It appends its actions to the output it is handed. Tokens stay the notifier's (one counter for everything), so
/// arming the limit is two steps: ``refresh(_:_:)`` says that it is due, the notifier arms it with a token of its own
/// (``armNetworkErrorLimit(token:after:_:)``).
struct ConnectionStatus: Equatable, Sendable {
    typealias Action = NotifierStateMachine.Action

    /// Whether the active transport's connection states feed the public state. Each transport is followed from its
    /// first run until it is replaced, so its id tells its reports from an earlier transport's.
    enum Following: Equatable, Sendable {
        case none
        /// Following; `connectedSince` is when the current connection came up, for the connected-time metric.
        case transport(state: ConnectionState, connectedSince: Date?)

        /// The followed transport's last state (`idle` when none is followed).
        var transportState: ConnectionState {
            if case .transport(let state, _) = self { state } else { .idle }
        }
    }

    /// The limit on how long the notifier may wait for a live connection before it reports `networkError`.
    enum NetworkErrorLimit: Equatable, Sendable {
        /// Not waiting, or nothing to wait for.
        case idle
        /// Waiting: the timer armed with `token` reports when it fires.
        case armed(token: Int)
        /// Reported for this offline episode: not again until the connection is live, the identity changes or a
        /// switch cuts over.
        case reported
    }

    /// What the public state depends on besides the transport's state.
    struct Context: Equatable, Sendable {
        /// Foreground (else the state is `suspended`).
        var isForeground: Bool
        /// Someone is signed in and their session holds (else the state is `offline`).
        var allowsRuns: Bool
        /// Some upstream runs.
        var upstreamsRunning: Bool
    }

    /// What the app sees.
    private(set) var publicState: NotifierConnectionState = .offline
    private(set) var following: Following = .none
    private(set) var networkErrorLimit: NetworkErrorLimit = .idle
    /// Why the followed transport last lost or could not make a connection, as it said with its latest state.
    private(set) var lastFailure: String?
    /// When the followed transport's outage began (its last acknowledged connection's last frame), as it said with its
    /// latest state; `nil` while connected.
    private(set) var lostAt: Date?

    /// Starts following the active transport's states, unless they are followed already.
    mutating func follow(_ transport: Int, _ output: inout [Action]) {
        guard following == .none else { return }
        following = .transport(state: .idle, connectedSince: nil)
        lastFailure = nil
        lostAt = nil
        output.append(.followStates(transport: transport))
    }

    /// Stops following, and reports how long the connection was up to `transport`'s metrics.
    mutating func stopFollowing(_ transport: NotifierStateMachine.TransportRef, now: Date, _ output: inout [Action]) {
        guard case .transport(_, let connectedSince) = following else { return }
        output.append(.stopFollowingStates)
        following = .none
        if let since = connectedSince {
            output.append(.metric(.connected(seconds: now.timeIntervalSince(since), transport: transport.name)))
        }
    }

    /// A state of the transport with id `id`, why it last lost or could not make a connection, and when its outage
    /// began. `false` when it is not the active one (a report of the transport followed before a cut-over); the caller
    /// then refreshes nothing.
    mutating func transportStateChanged(
        _ state: ConnectionState, reportedBy id: Int, active: NotifierStateMachine.TransportRef, lastFailure: String? = nil,
        lostAt: Date? = nil, now: Date, _ output: inout [Action]
    ) -> Bool {
        guard id == active.id, case .transport(_, var connectedSince) = following else { return false }
        self.lastFailure = lastFailure
        self.lostAt = state == .connected ? nil : lostAt
        if let since = connectedSince, state != .connected {
            output.append(.metric(.connected(seconds: now.timeIntervalSince(since), transport: active.name)))
            connectedSince = nil
        }
        switch state {
        case .connecting: output.append(.metric(.connectionAttempt(transport: active.name)))
        case .reconnecting: output.append(.metric(.reconnect(transport: active.name)))
        case .connected: if connectedSince == nil { connectedSince = now }
        case .disconnected(.failed(let error)): reportNetworkError(withLastFailure(error.description), &output)
        case .idle, .disconnected: break
        }
        following = .transport(state: state, connectedSince: connectedSince)
        return true
    }

    /// Whether the followed transport's link is down (what it carries may have missed events).
    var isTransportDown: Bool {
        switch following.transportState {
        case .connecting, .reconnecting, .disconnected: true
        case .idle, .connected: false
        }
    }

    /// Recomputes the public state and disarms or resets the network-error limit; `true` when the limit is due to be
    /// armed (see ``armNetworkErrorLimit(token:after:_:)``).
    mutating func refresh(_ context: Context, _ output: inout [Action]) -> Bool {
        let state: NotifierConnectionState =
            if !context.isForeground {
                .suspended
            } else if !context.allowsRuns {
                .offline
            } else {
                NotifierConnectionState(following.transportState, upstreamsRunning: context.upstreamsRunning)
            }
        if state != publicState {
            publicState = state
            output.append(.publishState(state))
        }
        let waitingForConnection = (state == .connecting || state == .reconnecting) && context.upstreamsRunning
        switch networkErrorLimit {
        case .idle where waitingForConnection:
            return true
        case .armed where !waitingForConnection:
            disarmNetworkErrorLimit(&output)
        case .reported where state == .live:
            networkErrorLimit = .idle
        default:
            break
        }
        return false
    }

    /// Arms the network-error limit with the notifier's `token`.
    mutating func armNetworkErrorLimit(token: Int, after duration: Duration, _ output: inout [Action]) {
        networkErrorLimit = .armed(token: token)
        output.append(.armTimer(.networkError, token: token, after: duration))
    }

    /// The network-error timer fired: it reports if it is the armed one and the notifier still waits for a connection.
    mutating func networkErrorLimitFired(token: Int, _ output: inout [Action], detail: () -> String) {
        guard networkErrorLimit == .armed(token: token) else { return }
        networkErrorLimit = .idle
        guard publicState == .connecting || publicState == .reconnecting else { return }
        reportNetworkError(withLastFailure(detail()), &output)
    }

    /// `detail`, and why the last attempt failed when the transport said.
    private func withLastFailure(_ detail: String) -> String {
        lastFailure.map { "\(detail); last attempt: \($0)" } ?? detail
    }

    mutating func disarmNetworkErrorLimit(_ output: inout [Action]) {
        guard case .armed = networkErrorLimit else { return }
        networkErrorLimit = .idle
        output.append(.cancelTimer(.networkError))
    }

    /// Reports `networkError` once per outage.
    mutating func reportNetworkError(_ detail: String, _ output: inout [Action]) {
        guard networkErrorLimit != .reported else { return }
        disarmNetworkErrorLimit(&output)
        networkErrorLimit = .reported
        output.append(.log(NotifierStateMachine.LogEntry(level: .warning, message: "network error", metadata: ["detail": detail])))
        output.append(.emit(.networkError(detail)))
    }

    /// A new episode (another identity, or a cut-over to another transport): a reported outage may be reported again.
    mutating func startEpisode() {
        if networkErrorLimit == .reported { networkErrorLimit = .idle }
    }

    /// The notifier shuts down: nothing is followed any more (no metric: the notifier is gone).
    mutating func forgetFollowing(_ output: inout [Action]) {
        if following != .none { output.append(.stopFollowingStates) }
        following = .none
    }

    /// The last step of a shutdown: the app sees `offline`.
    mutating func goOffline(_ output: inout [Action]) {
        guard publicState != .offline else { return }
        publicState = .offline
        output.append(.publishState(.offline))
    }
}
