import Foundation
import SubscriberCore
import Testing

@testable import BackendNotifier

/// The notifier's state machine on its own: every transition as a table of events in and actions out, with no task,
/// socket or clock. Identifiers are deterministic: runs, timer tokens, disconnect tokens and switches share one serial
/// counter, so `role#1` is the first thing the machine numbered.
@Suite("NotifierStateMachine")
struct NotifierStateMachineTests {
    typealias Machine = NotifierStateMachine
    typealias Action = Machine.Action
    typealias Event = Machine.Event

    static let appsync = Machine.TransportRef(id: 0, name: "appsync", dialect: .appSyncChannels)
    static let graphql = Machine.TransportRef(id: 1, name: "graphql", dialect: .graphQL)
    static let appsyncAgain = Machine.TransportRef(id: 2, name: "appsync", dialect: .appSyncChannels)
    static let user1 = Machine.Identity(userId: "u-1", organizationId: "o-1")
    static let user2 = Machine.Identity(userId: "u-2", organizationId: "o-2")
    static let signedOut = Machine.Identity(userId: nil, organizationId: nil)
    static let start = Date(timeIntervalSince1970: 1_700_000_000)

    /// A machine and a wall clock that moves only when told. A class, so `#expect(script.on(…) == …)` can call it.
    final class Script {
        var machine: Machine
        var now = NotifierStateMachineTests.start

        init(identity: Machine.Identity = NotifierStateMachineTests.user1) {
            machine = Machine(
                settings: NotifierConfiguration(), identity: identity, active: NotifierStateMachineTests.appsync)
        }

        @discardableResult
        func on(_ event: Event, after seconds: TimeInterval = 0) -> [Action] {
            now = now.addingTimeInterval(seconds)
            return machine.handle(event, now: now)
        }

        /// Feeds events whose actions the test does not look at.
        func given(_ events: Event...) {
            for event in events { on(event) }
        }
    }

    static func run(_ upstream: Upstream, _ serial: Int) -> Machine.RunID { Machine.RunID(upstream: upstream, serial: serial) }

    static func start(
        _ upstream: Upstream, _ serial: Int, on transport: Machine.TransportRef = appsync, as identity: Machine.Identity = user1,
        _ delivery: Machine.Delivery = .open
    ) -> Action {
        .startUpstream(Machine.RunStart(run: run(upstream, serial), transport: transport, identity: identity, delivery: delivery))
    }

    static func networkTimer(_ token: Int) -> Action { .armTimer(.networkError, token: token, after: .seconds(60)) }

    // MARK: Observers

    @Test("an observer starts its upstream on the active transport with the current identity; a second shares it")
    func observerStartsUpstream() {
        let script = Script()
        #expect(
            script.on(.observed(.role)) == [
                Self.start(.role, 1), .followStates(transport: 0), .publishState(.connecting), Self.networkTimer(2),
            ])
        #expect(script.on(.observed(.role)) == [])
        #expect(script.on(.observed(.organization)) == [Self.start(.organization, 3)])
        #expect(script.machine.isConnectedUpstream)
    }

    @Test("signed out: an observer starts nothing and the state stays offline")
    func observerWhileSignedOut() {
        let script = Script(identity: Self.signedOut)
        #expect(script.on(.observed(.role)) == [])
        #expect(script.machine.publicState == .offline)
    }

    @Test("the last observer gone stops the upstream; the state follows")
    func unobservedStopsUpstream() {
        let script = Script()
        script.given(.observed(.role))
        #expect(script.on(.unobserved(.role)) == [.stopUpstream(Self.run(.role, 1)), .publishState(.offline), .cancelTimer(.networkError)])
        #expect(!script.machine.isConnectedUpstream)
    }

    // MARK: Runs

    @Test("live, resumed, ended: the run's confirmation is reported once; a stopped run's reports are ignored")
    func runReports() {
        let script = Script()
        script.given(.observed(.role))
        #expect(script.on(.upstreamLive(Self.run(.role, 1))) == [.emit(.live(stream: "role", transport: "appsync"))])
        #expect(script.on(.upstreamLive(Self.run(.role, 99))) == [])
        // Ended without an error (GraphQL's complete): the stream is as dead as a failed one, and says so.
        #expect(
            script.on(.upstreamEnded(Self.run(.role, 1), nil)) == [
                .stopUpstream(Self.run(.role, 1)),
                .emit(.streamFailed(stream: "role", transport: "appsync", error: Machine.endedByServer)),
                .publishState(.offline), .cancelTimer(.networkError),
            ])
        #expect(script.on(.upstreamEnded(Self.run(.role, 1), .disconnected)) == [])
    }

    @Test("a stream failing with a network error reports streamFailed and networkError (once per offline episode)")
    func streamFailed() {
        let script = Script()
        script.given(.observed(.role), .observed(.revoke))
        let error = RealtimeError.reconnectAttemptsExhausted(3)
        #expect(
            script.on(.upstreamEnded(Self.run(.role, 1), error)) == [
                .stopUpstream(Self.run(.role, 1)),
                .emit(.streamFailed(stream: "role", transport: "appsync", error: error)),
                .cancelTimer(.networkError),
                .log(Machine.LogEntry.warning("network error", ["detail": error.description])),
                .emit(.networkError(error.description)),
            ])
        #expect(
            script.on(.upstreamEnded(Self.run(.revoke, 3), error)) == [
                .stopUpstream(Self.run(.revoke, 3)), .emit(.streamFailed(stream: "revoke", transport: "appsync", error: error)),
                .publishState(.offline),
            ])
    }

    @Test("sessionExpired: reported once however many upstreams end; every upstream stops until an update")
    func sessionExpiredOncePerEpisode() {
        let script = Script()
        script.given(.observed(.role), .observed(.revoke))
        #expect(
            script.on(.upstreamEnded(Self.run(.role, 1), .sessionExpired("refused"))) == [
                .stopUpstream(Self.run(.role, 1)), .stopUpstream(Self.run(.revoke, 3)), .emit(.sessionExpired), .publishState(.offline),
                .cancelTimer(.networkError),
            ])
        #expect(script.on(.upstreamEnded(Self.run(.revoke, 3), .sessionExpired("refused"))) == [])
        #expect(script.on(.observed(.organization)) == [])
        // The same identity again restarts everything observed.
        #expect(
            script.on(.updateRequested(Self.user1, operation: 1)) == [.disconnect(transport: 0, token: 4)])
        #expect(
            script.on(.disconnected(token: 4)) == [
                .completeOperation(1), Self.start(.organization, 5), Self.start(.role, 6), Self.start(.revoke, 7),
                .publishState(.connecting), Self.networkTimer(8),
            ])
    }

    @Test("signedOut from the transport: one signedOut, then another user's sign-in restarts with the new identity")
    func signedOutThenOtherUser() {
        let script = Script()
        script.given(.observed(.role))
        #expect(
            script.on(.upstreamEnded(Self.run(.role, 1), .signedOut)) == [
                .stopUpstream(Self.run(.role, 1)), .emit(.signedOut), .publishState(.offline), .cancelTimer(.networkError),
            ])
        script.given(.updateRequested(Self.user2, operation: 1))
        #expect(
            script.on(.disconnected(token: 3)) == [
                .completeOperation(1), Self.start(.role, 4, as: Self.user2), .publishState(.connecting), Self.networkTimer(5),
            ])
    }

    // MARK: Identity

    @Test("update: the new identity is in place before the disconnect; nothing starts until it has finished")
    func updateSerialisesTheDisconnect() {
        let script = Script()
        script.given(.observed(.role), .observed(.organization))
        #expect(
            script.on(.updateRequested(Self.user2, operation: 1)) == [
                .stopUpstream(Self.run(.organization, 3)), .stopUpstream(Self.run(.role, 1)), .publishState(.offline),
                .cancelTimer(.networkError), .disconnect(transport: 0, token: 4),
            ])
        #expect(script.machine.identity == Self.user2)
        // An observer arriving while the old connection closes waits: nothing subscribes now, with any identity.
        #expect(script.on(.observed(.revoke)) == [])
        // Reports of the stopped runs change nothing.
        #expect(script.on(.upstreamLive(Self.run(.role, 1))) == [])
        #expect(script.on(.upstreamEnded(Self.run(.organization, 3), nil)) == [])
        #expect(
            script.on(.disconnected(token: 4)) == [
                .completeOperation(1), Self.start(.organization, 5, as: Self.user2), Self.start(.role, 6, as: Self.user2),
                Self.start(.revoke, 7, as: Self.user2), .publishState(.connecting), Self.networkTimer(8),
            ])
    }

    @Test("update with the same identity while everything runs completes at once and changes nothing")
    func unchangedIdentity() {
        let script = Script()
        script.given(.observed(.role))
        #expect(script.on(.updateRequested(Self.user1, operation: 1)) == [.completeOperation(1)])
    }

    @Test("sign-out: upstreams stop, the transport disconnects, then signedOut; nothing starts")
    func signOut() {
        let script = Script()
        script.given(.observed(.role))
        #expect(
            script.on(.updateRequested(Self.signedOut, operation: 1)) == [
                .stopUpstream(Self.run(.role, 1)), .publishState(.offline), .cancelTimer(.networkError),
                .disconnect(transport: 0, token: 3),
            ])
        #expect(script.on(.disconnected(token: 3)) == [.emit(.signedOut), .completeOperation(1)])
        #expect(script.on(.observed(.revoke)) == [])
    }

    @Test("signing out again while signed out, with observers waiting, completes at once: one signedOut, no disconnect")
    func signOutTwice() {
        let script = Script()
        script.given(.observed(.role), .updateRequested(Self.signedOut, operation: 1), .disconnected(token: 3))
        #expect(script.on(.updateRequested(Self.signedOut, operation: 2)) == [.completeOperation(2)])
    }

    @Test("a new identity after the foreground does not inherit the suspension's gap: its streams report live")
    func updateAfterForeground() {
        let script = Script()
        script.given(.observed(.role), .enteredBackground, .timerFired(.backgroundGrace, token: 3), .disconnected(token: 4))
        script.given(.enteredForeground(operation: 1), .updateRequested(Self.user2, operation: 2))
        let started = script.on(.disconnected(token: 7)).compactMap { action -> Machine.RunID? in
            guard case .startUpstream(let start) = action, start.identity == Self.user2 else { return nil }
            return start.run
        }
        #expect(started == [Self.run(.role, 8)])
        #expect(script.on(.upstreamLive(Self.run(.role, 8))) == [.emit(.live(stream: "role", transport: "appsync"))])
    }

    @Test("operations queue in arrival order: an update during an update runs when it has finished")
    func updatesQueue() {
        let script = Script()
        script.given(.observed(.role))
        script.given(.updateRequested(Self.user2, operation: 1))
        #expect(script.on(.updateRequested(Self.user1, operation: 2)) == [])
        #expect(script.machine.waitingOperations == 1)
        // Nothing starts as user 2 in between: the next update starts what observers ask for.
        #expect(script.on(.disconnected(token: 3)) == [.completeOperation(1), .disconnect(transport: 0, token: 4)])
        #expect(script.on(.disconnected(token: 4)).contains(Self.start(.role, 5)))
        #expect(script.machine.waitingOperations == 0)
    }

    // MARK: The transport's states

    @Test("states: connecting, live, reconnecting map to the public state, with metrics and the network-error limit")
    func transportStates() {
        let script = Script()
        script.given(.observed(.role))
        #expect(script.on(.transportStateChanged(.connecting, transport: 0)) == [.metric(.connectionAttempt(transport: "appsync"))])
        #expect(
            script.on(.transportStateChanged(.connected, transport: 0), after: 1) == [.publishState(.live), .cancelTimer(.networkError)])
        #expect(
            script.on(.transportStateChanged(.reconnecting(attempt: 1, delay: .seconds(10)), transport: 0), after: 5) == [
                .metric(.connected(seconds: 5, transport: "appsync")), .metric(.reconnect(transport: "appsync")),
                .publishState(.reconnecting), Self.networkTimer(3),
            ])
        #expect(script.on(.transportStateChanged(.connected, transport: 5)) == [], "a stale following")
        #expect(
            script.on(.timerFired(.networkError, token: 3)) == [
                .log(
                    Machine.LogEntry.warning("network error", ["detail": "no live connection for 60.0 seconds"])),
                .emit(.networkError("no live connection for 60.0 seconds")),
            ])
        // Reported once per offline episode: not again until live.
        #expect(
            script.on(.transportStateChanged(.connecting, transport: 0)) == [
                .metric(.connectionAttempt(transport: "appsync")), .publishState(.connecting),
            ])
        #expect(script.on(.transportStateChanged(.connected, transport: 0)) == [.publishState(.live)])
        #expect(
            script.on(.transportStateChanged(.disconnected(.failed(.reconnectAttemptsExhausted(2))), transport: 0)) == [
                .metric(.connected(seconds: 0, transport: "appsync")),
                .log(
                    Machine.LogEntry.warning("network error", ["detail": RealtimeError.reconnectAttemptsExhausted(2).description])),
                .emit(.networkError(RealtimeError.reconnectAttemptsExhausted(2).description)), .publishState(.offline),
            ])
    }

    @Test("a network-error timer that was cancelled and fires anyway (a race) changes nothing")
    func staleTimer() {
        let script = Script()
        script.given(.observed(.role), .transportStateChanged(.connected, transport: 0))
        #expect(script.on(.timerFired(.networkError, token: 2)) == [])
    }

    // MARK: App lifecycle

    @Test("background: the grace timer suspends; upstreams stop, the transport disconnects, then suspended")
    func backgroundSuspends() {
        let script = Script()
        script.given(.observed(.role))
        #expect(script.on(.enteredBackground) == [.armTimer(.backgroundGrace, token: 3, after: .seconds(30))])
        #expect(
            script.on(.timerFired(.backgroundGrace, token: 3), after: 30) == [
                .stopUpstream(Self.run(.role, 1)), .publishState(.suspended), .cancelTimer(.networkError),
                .disconnect(transport: 0, token: 4),
            ])
        #expect(script.machine.suspendedAt == Self.start.addingTimeInterval(30))
        #expect(script.on(.observed(.revoke)) == [], "nothing starts while suspending")
        #expect(script.on(.disconnected(token: 4)) == [.emit(.suspended)])
        #expect(script.on(.observed(.organization)) == [], "nothing starts while suspended")
        // Foreground: everything observed restarts, and each stream reports the window it was suspended.
        #expect(
            script.on(.enteredForeground(operation: 1), after: 20) == [
                .completeOperation(1), Self.start(.organization, 5), Self.start(.role, 6), Self.start(.revoke, 7),
                .publishState(.connecting), Self.networkTimer(8),
            ])
        // From the margin before the suspension: what was on its way when the upstream stopped may be lost too.
        let gap = GapWindow(start: Self.start.addingTimeInterval(28), end: Self.start.addingTimeInterval(51))
        #expect(script.on(.upstreamLive(Self.run(.role, 6)), after: 1) == [.emit(.resumed(stream: "role", transport: "appsync", gap: gap))])
    }

    @Test("a stream not live again since a suspension gets its window when a switch or a restart replaces its run")
    func resumeGapOutlivesItsRun() {
        func suspendedAndBack() -> Script {
            let script = Script()
            script.given(.observed(.role))
            script.on(.upstreamLive(Self.run(.role, 1)))
            script.on(.enteredBackground)
            script.on(.timerFired(.backgroundGrace, token: 3), after: 30)
            script.on(.disconnected(token: 4))
            script.on(.enteredForeground(operation: 1), after: 20)  // role restarts as run 5 and never gets live
            return script
        }
        let suspendedSince = Self.start.addingTimeInterval(30 - 2)
        // A failover to GraphQL: the new run goes live inside the switch and the old one is gone at the cut-over.
        let switched = suspendedAndBack()
        switched.on(.switchRequested(target: Self.graphql, reason: .failover("down"), onlyFromOtherDialect: false, operation: 2), after: 5)
        switched.on(.upstreamLive(Self.run(.role, 8)), after: 1)
        let cutOver = switched.on(.timerFired(.switchSettle, token: 10), after: 0.5)
        let resumed = NotifierConnectionEvent.resumed(
            stream: "role", transport: "graphql", gap: GapWindow(start: suspendedSince, end: Self.start.addingTimeInterval(56.5)))
        #expect(cutOver.contains(.emit(resumed)), "\(cutOver)")
        // The same identity restarted (its streams had stalled): the window is still owed.
        let restarted = suspendedAndBack()
        restarted.on(.upstreamEnded(Self.run(.role, 5), .network("refused")), after: 5)
        restarted.on(.updateRequested(Self.user1, operation: 2))
        restarted.on(.disconnected(token: 7))
        let live = restarted.on(.upstreamLive(Self.run(.role, 8)), after: 1)
        let owed = GapWindow(start: suspendedSince, end: Self.start.addingTimeInterval(56))
        #expect(live == [.emit(.resumed(stream: "role", transport: "appsync", gap: owed))], "\(live)")
    }

    @Test("foreground within the grace delay: the timer is cancelled and the transport asked to verify its connection")
    func quickAppSwitch() {
        let script = Script()
        script.given(.observed(.role), .enteredBackground)
        #expect(
            script.on(.enteredForeground(operation: 1), after: 10) == [
                .cancelTimer(.backgroundGrace), .verifyConnection(transport: 0), .completeOperation(1),
            ])
        #expect(script.on(.timerFired(.backgroundGrace, token: 3), after: 20) == [], "the cancelled timer's late fire")
        #expect(script.machine.suspendedAt == nil)
    }

    @Test("a suspension queued behind an update is called off by the foreground")
    func foregroundCallsOffQueuedSuspension() {
        let script = Script()
        script.given(.observed(.role), .enteredBackground, .updateRequested(Self.user2, operation: 1))
        #expect(script.on(.timerFired(.backgroundGrace, token: 3), after: 30) == [])
        #expect(script.machine.waitingOperations == 1)
        #expect(script.on(.enteredForeground(operation: 2)) == [])
        #expect(script.machine.waitingOperations == 1, "the suspension went, the resumption waits")
        #expect(
            script.on(.disconnected(token: 4)) == [
                .completeOperation(1), Self.start(.role, 5, as: Self.user2), .publishState(.connecting), Self.networkTimer(6),
                .verifyConnection(transport: 0), .completeOperation(2),
            ])
        #expect(script.machine.suspendedAt == nil)
    }

    // MARK: Shutdown

    @Test("shutdown stops everything, answers every waiting operation and disconnects; afterwards operations return at once")
    func shutdown() {
        let script = Self.liveOnAppSync()
        script.given(
            .enteredBackground, .switchRequested(target: Self.graphql, reason: .requested, onlyFromOtherDialect: false, operation: 1),
            .updateRequested(Self.user1, operation: 2))  // the same identity: it waits for the switch
        #expect(
            script.on(.shutdown) == [
                .cancelTimer(.backgroundGrace), .cancelTimer(.switchTimeout), .stopUpstream(Self.run(.role, 1)),
                .stopUpstream(Self.run(.revoke, 3)), .stopFollowingStates, .stopUpstream(Self.run(.role, 6)),
                .stopUpstream(Self.run(.revoke, 7)), .disconnect(transport: 1, token: 9), .failOperation(1, .disconnected),
                .completeOperation(2), .disconnect(transport: 0, token: 10), .publishState(.offline),
            ])
        #expect(script.on(.updateRequested(Self.user1, operation: 3)) == [.completeOperation(3)])
        #expect(script.on(.observed(.organization)) == [])
        #expect(
            script.on(.switchRequested(target: Self.appsyncAgain, reason: .requested, onlyFromOtherDialect: false, operation: 4)) == [
                .forgetTransport(2), .failOperation(4, .disconnected),
            ])
    }
}
