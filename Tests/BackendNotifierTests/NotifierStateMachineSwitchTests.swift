import Foundation
import SubscriberCore
import Testing

@testable import BackendNotifier

// The table tests of switching transports (make-before-break), and of what meets a switch: an update, an observer
// arriving or leaving, the session ending, the next switch.
extension NotifierStateMachineTests {
    /// A script observing role and revoke on AppSync, both live, the transport connected.
    static func liveOnAppSync() -> Script {
        let script = Script()
        script.given(
            .observed(.role), .observed(.revoke), .upstreamLive(run(.role, 1)), .upstreamLive(run(.revoke, 3)),
            .transportStateChanged(.connected, transport: 0))
        return script
    }

    @Test("a requested switch is make-before-break: the new transport subscribes while the old one delivers")
    func switchPrepares() {
        let script = Self.liveOnAppSync()
        #expect(
            script.on(.switchRequested(target: Self.graphql, reason: .requested, onlyFromOtherDialect: false, operation: 1)) == [
                .beginOverlap(switch: 4, upstream: .role, old: Self.run(.role, 1), from: Self.appsync, to: Self.graphql),
                Self.start(.role, 5, on: Self.graphql, .held(switch: 4)),
                .beginOverlap(switch: 4, upstream: .revoke, old: Self.run(.revoke, 3), from: Self.appsync, to: Self.graphql),
                Self.start(.revoke, 6, on: Self.graphql, .held(switch: 4)),
                .armTimer(.switchTimeout, token: 7, after: .seconds(15)),
            ])
        #expect(script.machine.active == Self.appsync)
        #expect(script.on(.upstreamLive(Self.run(.role, 5))) == [], "one of two live: the old transport still delivers")
        // Both live: the old transport goes on delivering a little longer, for what is still on its way over its link.
        #expect(
            script.on(.upstreamLive(Self.run(.revoke, 6)), after: 1) == [
                .cancelTimer(.switchTimeout), .armTimer(.switchSettle, token: 8, after: .milliseconds(500)),
            ])
        #expect(script.machine.active == Self.appsync)
        #expect(
            script.on(.timerFired(.switchSettle, token: 8), after: 0.5) == [
                .cutOver(switch: 4), .stopUpstream(Self.run(.role, 1)), .stopUpstream(Self.run(.revoke, 3)), .stopFollowingStates,
                .metric(.connected(seconds: 1.5, transport: "appsync")), .activate(Self.graphql), .followStates(transport: 1),
                .publishState(.connecting), Self.networkTimer(9), .armTimer(.overlapEnd, token: 10, after: .seconds(2)),
                .disconnect(transport: 0, token: 11),
            ])
        #expect(script.machine.active == Self.graphql)
        let cutOver = Self.start.addingTimeInterval(1.5)
        #expect(
            script.on(.disconnected(token: 11), after: 0.5) == [
                .metric(.transportSwitch(from: "appsync", to: "graphql")),
                .log(
                    Machine.LogEntry.info(
                        "switched transport", ["from": "appsync", "to": "graphql", "gap": "\(GapWindow(start: cutOver, end: cutOver))"])),
                .emit(.transportSwitched(from: "appsync", to: "graphql", gap: GapWindow(start: cutOver, end: cutOver), reason: .requested)),
                .forgetTransport(0), .completeOperation(1),
            ])
        #expect(script.on(.timerFired(.overlapEnd, token: 10), after: 1.5) == [.endOverlap(switch: 4)])
    }

    @Test("failover and failback keep the gap rule's window: from the margin before the start to the end")
    func unplannedSwitchWindow() {
        for reason in [TransportSwitchReason.failover("down"), .failback] {
            let script = Self.liveOnAppSync()
            script.given(
                .switchRequested(target: Self.graphql, reason: reason, onlyFromOtherDialect: false, operation: 1),
                .upstreamLive(Self.run(.role, 5)))
            script.on(.upstreamLive(Self.run(.revoke, 6)), after: 2)
            script.on(.timerFired(.switchSettle, token: 8), after: 0.5)
            let actions = script.on(.disconnected(token: 11), after: 1)
            let gap = GapWindow(start: Self.start.addingTimeInterval(-2), end: Self.start.addingTimeInterval(3.5))
            #expect(actions.contains(.emit(.transportSwitched(from: "appsync", to: "graphql", gap: gap, reason: reason))))
        }
    }

    @Test("a requested switch whose old transport was not live throughout reports the honest window")
    func requestedSwitchOverABrokenTransport() {
        // The old transport reconnects during the overlap.
        let script = Self.liveOnAppSync()
        script.given(.switchRequested(target: Self.graphql, reason: .requested, onlyFromOtherDialect: false, operation: 1))
        script.given(.transportStateChanged(.reconnecting(attempt: 1, delay: .seconds(1)), transport: 0))
        script.given(.upstreamLive(Self.run(.role, 5)))
        script.on(.upstreamLive(Self.run(.revoke, 6)), after: 1)
        script.on(.timerFired(.switchSettle, token: 9))
        let gap = GapWindow(start: Self.start.addingTimeInterval(-2), end: Self.start.addingTimeInterval(1))
        #expect(
            script.on(.disconnected(token: 11)).contains(
                .emit(.transportSwitched(from: "appsync", to: "graphql", gap: gap, reason: .requested))))

        // An old subscription that never got live.
        let notLive = Script()
        notLive.given(
            .observed(.role), .switchRequested(target: Self.graphql, reason: .requested, onlyFromOtherDialect: false, operation: 1))
        notLive.on(.upstreamLive(Self.run(.role, 4)), after: 1)
        notLive.on(.timerFired(.switchSettle, token: 6))
        let window = GapWindow(start: Self.start.addingTimeInterval(-2), end: Self.start.addingTimeInterval(1))
        #expect(
            notLive.on(.disconnected(token: 8)).contains(
                .emit(.transportSwitched(from: "appsync", to: "graphql", gap: window, reason: .requested))))
    }

    @Test("a switch whose new transport is not live in time is abandoned: the old transport stays and delivers")
    func switchTimeout() {
        let script = Self.liveOnAppSync()
        script.given(.switchRequested(target: Self.graphql, reason: .requested, onlyFromOtherDialect: false, operation: 1))
        #expect(
            script.on(.timerFired(.switchTimeout, token: 7), after: 15) == [
                .stopUpstream(Self.run(.role, 5)), .stopUpstream(Self.run(.revoke, 6)), .endOverlap(switch: 4),
                .log(
                    Machine.LogEntry.warning(
                        "transport switch abandoned", ["to": "graphql", "error": "\(RealtimeError.connectionTimedOut(.seconds(15)))"])),
                .disconnect(transport: 1, token: 8),
            ])
        #expect(script.on(.upstreamLive(Self.run(.role, 5))) == [], "a late confirmation of an abandoned run")
        #expect(
            script.on(.disconnected(token: 8)) == [.forgetTransport(1), .failOperation(1, .connectionTimedOut(.seconds(15)))])
        #expect(script.machine.active == Self.appsync)
        #expect(script.machine.runs.keys.sorted { $0.rawValue < $1.rawValue } == [.revoke, .role])
    }

    @Test("a subscription failing on the new transport abandons the switch with its error")
    func switchFailure() {
        let script = Self.liveOnAppSync()
        script.given(.switchRequested(target: Self.graphql, reason: .requested, onlyFromOtherDialect: false, operation: 1))
        let error = RealtimeError.graphQLErrors("[]")
        let actions = script.on(.upstreamEnded(Self.run(.revoke, 6), error))
        #expect(actions.first == .cancelTimer(.switchTimeout))
        #expect(actions.last == .disconnect(transport: 1, token: 8))
        #expect(script.on(.disconnected(token: 8)) == [.forgetTransport(1), .failOperation(1, error)])
    }

    @Test("a switch to the dialect already active, asked for by kind, does nothing")
    func switchToTheSameKind() {
        let script = Self.liveOnAppSync()
        #expect(
            script.on(.switchRequested(target: Self.appsyncAgain, reason: .requested, onlyFromOtherDialect: true, operation: 1)) == [
                .forgetTransport(2), .completeOperation(1),
            ])
    }

    @Test("another identity during a preparing switch gives it up: the update runs once the new transport is disconnected")
    func updateDuringSwitch() {
        let script = Self.liveOnAppSync()
        script.given(.switchRequested(target: Self.graphql, reason: .requested, onlyFromOtherDialect: false, operation: 1))
        // Old and new runs subscribed with the old identity: they all stop now.
        let abandoned = Machine.LogEntry.warning("transport switch abandoned", ["to": "graphql", "error": "\(RealtimeError.disconnected)"])
        #expect(
            script.on(.updateRequested(Self.user2, operation: 2)) == [
                .stopUpstream(Self.run(.role, 1)), .stopUpstream(Self.run(.revoke, 3)), .cancelTimer(.switchTimeout),
                .stopUpstream(Self.run(.role, 5)), .stopUpstream(Self.run(.revoke, 6)), .endOverlap(switch: 4), .log(abandoned),
                .disconnect(transport: 1, token: 8),
            ])
        #expect(
            script.on(.disconnected(token: 8)) == [
                .forgetTransport(1), .failOperation(1, .disconnected), .disconnect(transport: 0, token: 9),
            ])
        #expect(script.machine.identity == Self.user2)
        #expect(
            script.on(.disconnected(token: 9)) == [
                .completeOperation(2), Self.start(.role, 10, as: Self.user2), Self.start(.revoke, 11, as: Self.user2),
            ])
        // A sign-out gives it up the same way; the switch's caller hears why.
        let signingOut = Self.liveOnAppSync()
        signingOut.given(
            .switchRequested(target: Self.graphql, reason: .requested, onlyFromOtherDialect: false, operation: 1),
            .updateRequested(Self.signedOut, operation: 2))
        #expect(signingOut.on(.disconnected(token: 8)).prefix(2) == [.forgetTransport(1), .failOperation(1, .signedOut)])
    }

    @Test("updates go ahead of queued switches, in their own order")
    func updateGoesAheadOfQueuedSwitches() {
        let script = Self.liveOnAppSync()
        let switches = [(Self.graphql, 1), (Self.appsyncAgain, 2), (Self.graphql, 4)].map { target, operation in
            Machine.Event.switchRequested(target: target, reason: .failback, onlyFromOtherDialect: false, operation: operation)
        }
        script.given(
            switches[0], switches[1], .updateRequested(Self.user2, operation: 3), switches[2],
            .updateRequested(Self.user1, operation: 5), .updateRequested(Self.user1, operation: 6),
            .updateRequested(Self.user2, operation: 7))
        #expect(
            script.machine.queue == [
                .update(Self.user2, operation: 3), .update(Self.user1, operation: 5), .update(Self.user1, operation: 6),
                .update(Self.user2, operation: 7),
                .switchTransport(Self.appsyncAgain, .failback, onlyFromOtherDialect: false, operation: 2),
                .switchTransport(Self.graphql, .failback, onlyFromOtherDialect: false, operation: 4),
            ])
    }

    @Test("a switch queued behind a given-up one prepares with the identity of the update that gave it up")
    func queuedSwitchAfterUpdate() {
        let script = Self.liveOnAppSync()
        script.given(
            .switchRequested(target: Self.graphql, reason: .requested, onlyFromOtherDialect: false, operation: 1),
            .switchRequested(target: Self.appsyncAgain, reason: .failback, onlyFromOtherDialect: false, operation: 2),
            .updateRequested(Self.user2, operation: 3))
        // The update runs first: the queued switch would have prepared with user 1's identity.
        #expect(
            script.on(.disconnected(token: 8)) == [
                .forgetTransport(1), .failOperation(1, .disconnected), .disconnect(transport: 0, token: 9),
            ])
        let actions = script.on(.disconnected(token: 9))
        let starts = actions.compactMap { if case .startUpstream(let start) = $0 { start } else { nil } }
        #expect(actions.first == .completeOperation(3))
        #expect(starts.map(\.transport) == [Self.appsync, Self.appsync, Self.appsyncAgain, Self.appsyncAgain])
        #expect(starts.allSatisfy { $0.identity == Self.user2 })
    }

    @Test("nothing starts with an identity about to be replaced: a stream that failed during a given-up switch waits for the update")
    func failedStreamWaitsForUpdate() {
        let script = Self.liveOnAppSync()
        script.given(
            .switchRequested(target: Self.graphql, reason: .requested, onlyFromOtherDialect: false, operation: 1),
            .upstreamEnded(Self.run(.revoke, 3), .graphQLErrors("[]")), .updateRequested(Self.user2, operation: 2))
        #expect(
            script.on(.disconnected(token: 8)) == [
                .forgetTransport(1), .failOperation(1, .disconnected), .disconnect(transport: 0, token: 9),
            ])
        #expect(
            script.on(.disconnected(token: 9)) == [
                .completeOperation(2), Self.start(.role, 10, as: Self.user2), Self.start(.revoke, 11, as: Self.user2),
            ])
        // Nor when a resumption is queued ahead of the update.
        let resuming = Self.liveOnAppSync()
        resuming.given(
            .switchRequested(target: Self.graphql, reason: .requested, onlyFromOtherDialect: false, operation: 1),
            .upstreamEnded(Self.run(.revoke, 3), .graphQLErrors("[]")), .enteredForeground(operation: 2),
            .updateRequested(Self.user2, operation: 3))
        #expect(
            resuming.on(.disconnected(token: 8)) == [
                .forgetTransport(1), .failOperation(1, .disconnected), .verifyConnection(transport: 0), .completeOperation(2),
                .disconnect(transport: 0, token: 9),
            ])
    }

    @Test("an update with the same identity during a switch waits for it")
    func sameIdentityDuringSwitch() {
        let script = Self.liveOnAppSync()
        script.given(.switchRequested(target: Self.graphql, reason: .requested, onlyFromOtherDialect: false, operation: 1))
        #expect(script.on(.updateRequested(Self.user1, operation: 2)) == [])
        #expect(script.machine.waitingOperations == 1)
        script.given(.upstreamLive(Self.run(.role, 5)), .upstreamLive(Self.run(.revoke, 6)), .timerFired(.switchSettle, token: 8))
        #expect(script.on(.disconnected(token: 11)).suffix(2) == [.completeOperation(1), .completeOperation(2)])
    }

    @Test("an update during the cut-over waits for it, its runs stopped at once; it then uses the new identity on the new transport")
    func updateDuringCutOver() {
        let script = Self.liveOnAppSync()
        script.given(
            .switchRequested(target: Self.graphql, reason: .requested, onlyFromOtherDialect: false, operation: 1),
            .upstreamLive(Self.run(.role, 5)), .upstreamLive(Self.run(.revoke, 6)), .timerFired(.switchSettle, token: 8))
        // The new runs delivered the old identity's events: they stop now, not after the cut-over.
        #expect(
            script.on(.updateRequested(Self.user2, operation: 2)) == [
                .stopUpstream(Self.run(.role, 5)), .stopUpstream(Self.run(.revoke, 6)), .publishState(.offline),
                .cancelTimer(.networkError),
            ])
        #expect(script.machine.identity == Self.user1)
        let actions = script.on(.disconnected(token: 11))
        #expect(
            Array(actions.suffix(5)) == [
                .forgetTransport(0), .completeOperation(1), .cancelTimer(.overlapEnd), .endOverlap(switch: 4),
                .disconnect(transport: 1, token: 12),
            ])
        #expect(script.machine.identity == Self.user2)
        #expect(
            script.on(.disconnected(token: 12)) == [
                .completeOperation(2), Self.start(.role, 13, on: Self.graphql, as: Self.user2),
                Self.start(.revoke, 14, on: Self.graphql, as: Self.user2), .publishState(.connecting), Self.networkTimer(15),
            ])
    }

    @Test("an observer arriving during a switch starts on the new transport when the switch ends")
    func observerDuringSwitch() {
        let script = Self.liveOnAppSync()
        script.given(.switchRequested(target: Self.graphql, reason: .requested, onlyFromOtherDialect: false, operation: 1))
        #expect(script.on(.observed(.organization)) == [])
        script.given(.upstreamLive(Self.run(.role, 5)), .upstreamLive(Self.run(.revoke, 6)), .timerFired(.switchSettle, token: 8))
        let actions = script.on(.disconnected(token: 11))
        let started = Self.start(.organization, 12, on: Self.graphql)
        #expect(actions.contains(started))
        #expect(actions.firstIndex(of: .completeOperation(1))! < actions.firstIndex(of: started)!)
    }

    @Test("the last observer leaving during a switch stops both runs; the switch cuts over when the rest is live")
    func unobservedDuringSwitch() {
        let script = Self.liveOnAppSync()
        script.given(.switchRequested(target: Self.graphql, reason: .requested, onlyFromOtherDialect: false, operation: 1))
        script.given(.upstreamLive(Self.run(.role, 5)))
        #expect(
            script.on(.unobserved(.revoke)) == [
                .stopUpstream(Self.run(.revoke, 3)), .stopUpstream(Self.run(.revoke, 6)), .cancelTimer(.switchTimeout),
                .armTimer(.switchSettle, token: 8, after: .milliseconds(500)),
            ])
        #expect(script.on(.timerFired(.switchSettle, token: 8)).first == .cutOver(switch: 4))
        #expect(script.machine.active == Self.graphql)
        #expect(Array(script.machine.runs.keys) == [.role])
    }

    @Test("the session ending during a switch abandons it; sessionExpired once")
    func sessionEndsDuringSwitch() {
        let script = Self.liveOnAppSync()
        script.given(.switchRequested(target: Self.graphql, reason: .requested, onlyFromOtherDialect: false, operation: 1))
        let actions = script.on(.upstreamEnded(Self.run(.role, 1), .sessionExpired("x")))
        #expect(actions.filter { $0 == .emit(.sessionExpired) }.count == 1)
        #expect(actions.contains(.disconnect(transport: 1, token: 8)))
        #expect(script.on(.disconnected(token: 8)) == [.forgetTransport(1), .failOperation(1, .sessionExpired("x"))])
        #expect(script.machine.runs.isEmpty)
    }

    @Test("a switch starting while the last one still de-duplicates ends that overlap first")
    func switchEndsTheLastOverlap() {
        let script = Self.liveOnAppSync()
        script.given(
            .switchRequested(target: Self.graphql, reason: .requested, onlyFromOtherDialect: false, operation: 1),
            .upstreamLive(Self.run(.role, 5)), .upstreamLive(Self.run(.revoke, 6)), .timerFired(.switchSettle, token: 8),
            .disconnected(token: 11))
        let actions = script.on(.switchRequested(target: Self.appsyncAgain, reason: .requested, onlyFromOtherDialect: false, operation: 2))
        #expect(Array(actions.prefix(2)) == [.cancelTimer(.overlapEnd), .endOverlap(switch: 4)])
    }
}
