import Foundation
import Logging
import SubscriberCore
import Testing

@testable import BackendNotifier

/// The notifier's connection picture on its own (``ConnectionStatus``): the transport's states in, the public state,
/// metrics and the network-error limit out, as tables of calls and the actions they append.
@Suite("ConnectionStatus")
struct ConnectionStatusTests {
    typealias Action = NotifierStateMachine.Action

    static let appsync = NotifierStateMachine.TransportRef(id: 0, name: "appsync", dialect: .appSyncChannels)
    static let start = Date(timeIntervalSince1970: 1_700_000_000)
    static let running = ConnectionStatus.Context(isForeground: true, allowsRuns: true, upstreamsRunning: true)

    /// A status with its output, so each step's actions are read on their own.
    struct Script {
        var status = ConnectionStatus()
        var output: [Action] = []

        mutating func step(_ body: (inout ConnectionStatus, inout [Action]) -> Void) -> [Action] {
            output = []
            body(&status, &output)
            return output
        }

        mutating func state(_ state: ConnectionState, id: Int = 0, failure: String? = nil, at seconds: TimeInterval = 0) -> [Action] {
            step { status, output in
                _ = status.transportStateChanged(
                    state, reportedBy: id, active: ConnectionStatusTests.appsync, lastFailure: failure,
                    now: ConnectionStatusTests.start.addingTimeInterval(seconds),
                    &output)
            }
        }

        /// Refreshes and, when the limit is due, arms it with `token` (as the notifier does).
        mutating func refresh(_ context: ConnectionStatus.Context = ConnectionStatusTests.running, token: Int = 7) -> [Action] {
            step { status, output in
                if status.refresh(context, &output) { status.armNetworkErrorLimit(token: token, after: .seconds(60), &output) }
            }
        }
    }

    static func networkError(_ detail: String) -> [Action] {
        [
            .log(NotifierStateMachine.LogEntry(level: .warning, message: "network error", metadata: ["detail": detail])),
            .emit(.networkError(detail)),
        ]
    }

    @Test("it follows once, ignores another transport's reports, and counts attempts, reconnects and connected time")
    func followingAndMetrics() {
        var script = Script()
        #expect(script.step { $0.follow(0, &$1) } == [.followStates(transport: 0)])
        #expect(script.step { $0.follow(0, &$1) } == [])
        var accepted = true
        _ = script.step { accepted = $0.transportStateChanged(.connected, reportedBy: 5, active: Self.appsync, now: Self.start, &$1) }
        #expect(!accepted, "a stale transport's report")
        #expect(script.state(.connecting) == [.metric(.connectionAttempt(transport: "appsync"))])
        #expect(script.status.isTransportDown)
        #expect(script.state(.connected, at: 1) == [])
        #expect(!script.status.isTransportDown)
        #expect(
            script.state(.reconnecting(attempt: 1, delay: .seconds(1)), at: 3.5) == [
                .metric(.connected(seconds: 2.5, transport: "appsync")), .metric(.reconnect(transport: "appsync")),
            ])
        #expect(script.state(.connected, at: 4) == [])
        #expect(script.state(.connected, at: 5) == [], "connected again: the connection still counts from 4")
        #expect(
            script.step { $0.stopFollowing(Self.appsync, now: Self.start.addingTimeInterval(6), &$1) } == [
                .stopFollowingStates, .metric(.connected(seconds: 2, transport: "appsync")),
            ])
        #expect(script.step { $0.stopFollowing(Self.appsync, now: Self.start, &$1) } == [], "not following any more")
    }

    @Test("the transport is down while connecting, reconnecting or disconnected, whatever the reason")
    func transportDown() {
        var script = Script()
        #expect(!script.status.isTransportDown, "nothing followed")
        _ = script.step { $0.follow(0, &$1) }
        #expect(!script.status.isTransportDown, "idle: nothing was carried")
        let states: [(ConnectionState, Bool)] = [
            (.connecting, true), (.connected, false), (.reconnecting(attempt: 1, delay: .seconds(1)), true), (.connected, false),
            (.disconnected(.requested), true), (.disconnected(.failed(.disconnected)), true), (.disconnected(.signedOut), true),
            (.disconnected(.sessionExpired), true), (.idle, false),
        ]
        for (state, down) in states {
            _ = script.state(state)
            #expect(script.status.isTransportDown == down, "\(state)")
        }
    }

    @Test("the public state: suspended in the background, offline without a session, else the transport's")
    func publicState() {
        var script = Script()
        _ = script.step { $0.follow(0, &$1) }
        _ = script.state(.connected)
        #expect(script.refresh() == [.publishState(.live)])
        #expect(script.refresh() == [], "unchanged")
        #expect(script.refresh(.init(isForeground: false, allowsRuns: true, upstreamsRunning: false)) == [.publishState(.suspended)])
        #expect(script.refresh(.init(isForeground: true, allowsRuns: false, upstreamsRunning: false)) == [.publishState(.offline)])
        #expect(script.refresh() == [.publishState(.live)])
        #expect(script.step { $0.goOffline(&$1) } == [.publishState(.offline)])
        #expect(script.step { $0.goOffline(&$1) } == [])
        #expect(script.step { $0.forgetFollowing(&$1) } == [.stopFollowingStates])
        #expect(script.step { $0.forgetFollowing(&$1) } == [])
    }

    @Test("the network-error limit: armed while upstreams wait, disarmed when live, reported once per outage")
    func networkErrorLimit() {
        var script = Script()
        _ = script.step { $0.follow(0, &$1) }
        _ = script.state(.connecting)
        #expect(
            script.refresh(token: 7) == [.publishState(.connecting), .armTimer(.networkError, token: 7, after: .seconds(60))])
        #expect(script.refresh(token: 8) == [], "armed already")
        #expect(script.step { $0.networkErrorLimitFired(token: 6, &$1) { "stale" } } == [], "another token")
        #expect(
            script.step { $0.networkErrorLimitFired(token: 7, &$1) { "no live connection" } } == Self.networkError("no live connection"))
        #expect(script.status.networkErrorLimit == .reported)
        #expect(script.refresh(token: 9) == [], "reported: not armed again in this outage")
        #expect(script.step { $0.reportNetworkError("again", &$1) } == [])
        _ = script.state(.connected)
        #expect(script.refresh() == [.publishState(.live)])
        #expect(script.status.networkErrorLimit == .idle, "live again: a new outage reports again")
        _ = script.state(.reconnecting(attempt: 1, delay: .seconds(1)))
        #expect(
            script.refresh(token: 10) == [.publishState(.reconnecting), .armTimer(.networkError, token: 10, after: .seconds(60))])
        _ = script.state(.connected)
        #expect(script.refresh() == [.publishState(.live), .cancelTimer(.networkError)])
        #expect(script.step { $0.networkErrorLimitFired(token: 10, &$1) { "late" } } == [], "disarmed")
    }

    @Test("no upstream waiting, no limit; a failed transport reports at once; a new episode may report again")
    func failuresAndEpisodes() {
        var script = Script()
        _ = script.step { $0.follow(0, &$1) }
        _ = script.state(.connecting)
        #expect(script.refresh(.init(isForeground: true, allowsRuns: true, upstreamsRunning: false)) == [.publishState(.connecting)])
        let failure = RealtimeError.reconnectAttemptsExhausted(2)
        #expect(script.state(.disconnected(.failed(failure))) == Self.networkError(failure.description))
        #expect(script.state(.disconnected(.failed(failure))) == [], "once per outage")
        _ = script.step { status, _ in status.startEpisode() }
        #expect(script.status.networkErrorLimit == .idle)
        #expect(script.state(.disconnected(.failed(failure))) == Self.networkError(failure.description))
        // Armed, then the notifier shuts down: disarmed.
        var armed = Script()
        _ = armed.step { $0.follow(0, &$1) }
        _ = armed.state(.connecting)
        _ = armed.refresh(token: 3)
        #expect(armed.step { $0.disarmNetworkErrorLimit(&$1) } == [.cancelTimer(.networkError)])
        #expect(armed.step { $0.disarmNetworkErrorLimit(&$1) } == [])
    }

    @Test("a network error says why the last attempt failed, as the active transport said with its latest state")
    func networkErrorNamesTheLastFailure() {
        var script = Script()
        _ = script.step { $0.follow(0, &$1) }
        _ = script.state(.connecting)
        _ = script.refresh(token: 7)
        _ = script.state(.reconnecting(attempt: 1, delay: .seconds(1)), failure: "open failed: CERTIFICATE_VERIFY_FAILED")
        _ = script.state(.reconnecting(attempt: 1, delay: .seconds(1)), id: 5, failure: "another transport's")
        #expect(
            script.step { $0.networkErrorLimitFired(token: 7, &$1) { "no live connection" } }
                == Self.networkError("no live connection; last attempt: open failed: CERTIFICATE_VERIFY_FAILED"))
        _ = script.state(.connected)
        _ = script.refresh()
        let failure = RealtimeError.reconnectAttemptsExhausted(2)
        #expect(
            script.state(.disconnected(.failed(failure)), failure: "closed by the server, close 4401 (remote)")
                == [.metric(.connected(seconds: 0, transport: "appsync"))]
                + Self.networkError("\(failure); last attempt: closed by the server, close 4401 (remote)"))
        // A transport followed anew starts with no failure of its own.
        var fresh = Script()
        _ = fresh.step { $0.follow(0, &$1) }
        #expect(fresh.status.lastFailure == nil)
        _ = fresh.state(.connecting, failure: "stale")
        _ = fresh.step { $0.forgetFollowing(&$1) }
        _ = fresh.step { $0.follow(0, &$1) }
        #expect(fresh.status.lastFailure == nil)
    }
}
