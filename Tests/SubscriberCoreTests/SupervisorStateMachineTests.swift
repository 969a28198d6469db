import Testing

@testable import SubscriberCore

/// ``SupervisorStateMachine`` by table: a state reached through inputs, one more input, the actions and the state
/// that follow. No tasks and no clock: every decision of the supervisor (connect, back off with jitter, the network
/// path, the interface, the foreground probe, rotation, credentials and sign-out) is visible here.
@Suite("SupervisorStateMachine")
struct SupervisorStateMachineTests {
    typealias Machine = SupervisorStateMachine
    typealias Action = SupervisorStateMachine.Action

    /// Jitter that always draws 0: each delay is the policy's full exponential step.
    private static func machine(
        _ policy: ReconnectPolicy = ReconnectPolicy.exponential(base: .seconds(1), max: .seconds(10))
    ) -> Machine {
        Machine(policy: policy, random: { 0 })
    }

    private static let wifi = NetworkPath.satisfied(.wifi)
    private static let cellular = NetworkPath.satisfied(.cellular)
    private static let retryable = LinkLoss.lost(.retryable)

    /// A machine whose primary link 0 is under way.
    private static func linked() -> Machine {
        var machine = machine()
        _ = machine.start(wantsConnection: true)
        return machine
    }

    /// A machine backing off (id 0) after link 0 was lost.
    private static func backingOff() -> Machine {
        var machine = linked()
        _ = machine.linkEnded(loss: retryable, acknowledged: true, wantsConnection: true)
        return machine
    }

    // MARK: Starting and demand

    @Test("start: wanted connects at once; not wanted is idle")
    func start() {
        var wanted = Self.machine()
        #expect(wanted.start(wantsConnection: true) == [.report(.connecting), .startLink(id: 0, role: .primary, forceRefresh: false)])
        #expect(wanted.state == .linked)

        var unwanted = Self.machine()
        #expect(unwanted.start(wantsConnection: false) == [.report(.idle)])
        #expect(unwanted.state == .idle)
    }

    @Test("demand: an idle supervisor connects when wanted; a linked or backing-off one does nothing")
    func demand() {
        var idle = Self.machine()
        _ = idle.start(wantsConnection: false)
        #expect(
            idle.demandChanged(wantsConnection: true) == [.report(.connecting), .startLink(id: 0, role: .primary, forceRefresh: false)])

        var linked = Self.linked()
        #expect(linked.demandChanged(wantsConnection: true) == [])
        #expect(linked.state == .linked)

        var backingOff = Self.backingOff()
        #expect(backingOff.demandChanged(wantsConnection: true) == [])
        #expect(backingOff.state == .backingOff(id: 0))
    }

    // MARK: Links ending, backoff with jitter

    @Test(
        "a lost link backs off per policy: attempts 1, 2, 3, … with the jittered delay; an acknowledged link that lasted restarts the count",
        arguments: [
            (false, [1, 2, 4]),
            (true, [1, 1, 1]),
        ] as [(Bool, [Int64])])
    func backoff(acknowledged: Bool, seconds: [Int64]) {
        var machine = Self.linked()
        var delays: [Int64] = []
        for attempt in 1...3 {
            let actions = machine.linkEnded(
                loss: Self.retryable, acknowledged: acknowledged, lasted: Machine.backoffRestartsAfter, wantsConnection: true)
            guard case .startBackoff(let id, let delay, let reported)? = actions.last else {
                Issue.record("expected a backoff, got \(actions)")
                return
            }
            #expect(actions.first == .report(.reconnecting(attempt: reported, delay: delay)))
            #expect(reported == (acknowledged ? 1 : attempt))
            #expect(machine.state == .backingOff(id: id))
            delays.append(delay.components.seconds)
            #expect(
                machine.backoffElapsed(id: id, wantsConnection: true).last == .startLink(id: attempt, role: .primary, forceRefresh: false))
        }
        #expect(delays == seconds)
    }

    @Test("a link that ends right after its ack is one more failed attempt: the delays grow; one that lasted restarts the count")
    func flappingLinkBacksOff() {
        var machine = Self.linked()
        var delays: [Duration?] = []
        func lose(lasting lasted: Duration) -> Duration? {
            let actions = machine.linkEnded(loss: Self.retryable, acknowledged: true, lasted: lasted, wantsConnection: true)
            guard case .startBackoff(let id, let delay, _)? = actions.last else { return nil }
            _ = machine.backoffElapsed(id: id, wantsConnection: true)
            return delay
        }
        for _ in 1...5 { delays.append(lose(lasting: .milliseconds(50))) }
        #expect(delays == [.seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(10)])
        #expect(lose(lasting: Machine.backoffRestartsAfter - .milliseconds(1)) == .seconds(10))
        #expect(lose(lasting: Machine.backoffRestartsAfter) == .seconds(1), "a lasting link: the count starts again")
    }

    @Test("a link lost with nothing wanted goes idle at once, with no backoff; nothing wanted while backing off: the backoff ends, idle")
    func lostWhileUnwanted() {
        var lost = Self.linked()
        #expect(lost.linkEnded(loss: Self.retryable, acknowledged: true, wantsConnection: false) == [.report(.idle)])
        #expect(lost.state == .idle)

        var backingOff = Self.backingOff()
        #expect(backingOff.demandChanged(wantsConnection: false) == [.cancelBackoff(id: 0), .report(.idle)])
        #expect(backingOff.state == .idle)
        #expect(backingOff.backoffElapsed(id: 0, wantsConnection: false) == [])
    }

    @Test("the jitter scales each delay by the draw (full jitter: a draw of 0.75 leaves a quarter of the step)")
    func jitter() {
        var machine = Machine(policy: .exponential(base: .seconds(1), max: .seconds(10)), random: { 0.75 })
        _ = machine.start(wantsConnection: true)
        let actions = machine.linkEnded(loss: Self.retryable, acknowledged: false, wantsConnection: true)
        #expect(actions.last == .startBackoff(id: 0, delay: .milliseconds(250), attempt: 1))
    }

    @Test("a backoff that is no longer the current one is ignored when it ends")
    func staleBackoff() {
        var machine = Self.backingOff()
        _ = machine.verifyConnection(wantsConnection: true)  // skips backoff 0: link 1 starts
        #expect(machine.state == .linked)
        #expect(machine.backoffElapsed(id: 0, wantsConnection: true) == [])
        #expect(machine.state == .linked)
    }

    @Test("a lost link with nothing wanted any more goes idle; a replaced one changes nothing")
    func lostOrReplaced() {
        var unwanted = Self.linked()
        #expect(unwanted.linkEnded(loss: .lost(.requested), acknowledged: true, wantsConnection: false) == [.report(.idle)])
        #expect(unwanted.state == .idle)

        var replaced = Self.linked()
        #expect(replaced.linkEnded(loss: .replaced, acknowledged: true, wantsConnection: true) == [])
        #expect(replaced.state == .linked)
    }

    // MARK: Credentials and sign-out

    @Test("an auth refusal retries at once with refreshed credentials; a second stops with sessionExpired")
    func authRefusals() {
        var machine = Self.linked()
        #expect(
            machine.linkEnded(loss: .lost(.authRejected("401")), acknowledged: false, wantsConnection: true)
                == [.report(.connecting), .startLink(id: 1, role: .primary, forceRefresh: true)])
        let actions = machine.linkEnded(loss: .lost(.authRejected("401")), acknowledged: false, wantsConnection: true)
        guard case .stop(.sessionExpired, .sessionExpired)? = actions.first else {
            Issue.record("expected sessionExpired, got \(actions)")
            return
        }
        #expect(machine.state == .stopped)
    }

    @Test("a refusal right after an acknowledgement counts as the retry's refusal; one after a lasting link is a new episode")
    func authRefusalsAfterTheAcknowledgement() {
        var quick = Self.linked()
        #expect(
            quick.linkEnded(loss: .lost(.authRejected("4403")), acknowledged: true, lasted: .seconds(5), wantsConnection: true)
                == [.report(.connecting), .startLink(id: 1, role: .primary, forceRefresh: true)])
        let again = quick.linkEnded(
            loss: .lost(.authRejected("4403")), acknowledged: true,
            lasted: SupervisorStateMachine.credentialsProvenAfter - .milliseconds(1), wantsConnection: true)
        guard case .stop(.sessionExpired, .sessionExpired)? = again.first else {
            Issue.record("expected sessionExpired, got \(again)")
            return
        }
        var lasting = Self.linked()
        _ = lasting.linkEnded(loss: .lost(.authRejected("4403")), acknowledged: true, lasted: .seconds(5), wantsConnection: true)
        #expect(
            lasting.linkEnded(
                loss: .lost(.authRejected("4403")), acknowledged: true, lasted: SupervisorStateMachine.credentialsProvenAfter,
                wantsConnection: true) == [.report(.connecting), .startLink(id: 2, role: .primary, forceRefresh: true)])
    }

    @Test("signed out before an attempt: stop; after a stop every input is ignored")
    func stoppedIgnoresEverything() {
        var machine = Self.linked()
        #expect(machine.noCredentials(.signedOut, wantsConnection: true) == [.stop(.signedOut, .signedOut)])
        #expect(machine.state == .stopped)
        #expect(machine.demandChanged(wantsConnection: true) == [])
        #expect(machine.linkEnded(loss: Self.retryable, acknowledged: true, wantsConnection: true) == [])
        #expect(machine.verifyConnection(wantsConnection: true) == [])
        #expect(machine.rotationDue() == [])
        #expect(machine.pathChanged(to: .unsatisfied, wantsConnection: true) == [])
        #expect(machine.noCredentials(.sessionExpired("again"), wantsConnection: true) == [])
        #expect(machine.requestsEnded() == [])
    }

    private static let unavailable = RealtimeError.sessionExpired("credentials unavailable: offline")

    /// The session throws for attempt after attempt, each retried after its backoff: the delays, `nil` for none.
    private static func credentialsFail(_ times: Int, _ machine: inout Machine) -> [Duration?] {
        (0..<times).map { _ in
            guard case .startBackoff(let id, let delay, _)? = machine.noCredentials(unavailable, wantsConnection: true).last else {
                return nil
            }
            _ = machine.backoffElapsed(id: id, wantsConnection: true)
            return delay
        }
    }

    @Test("the session throws: backed off and retried, reconnecting reported; too many times in a row: stop with sessionExpired")
    func credentialsUnavailable() {
        var machine = Self.linked()
        #expect(
            machine.noCredentials(Self.unavailable, wantsConnection: true)
                == [.report(.reconnecting(attempt: 1, delay: .seconds(1))), .startBackoff(id: 0, delay: .seconds(1), attempt: 1)])
        #expect(machine.state == .backingOff(id: 0))
        _ = machine.backoffElapsed(id: 0, wantsConnection: true)
        #expect(!Self.credentialsFail(ReconnectBookkeeping.credentialsRetries - 1, &machine).contains(nil))
        #expect(machine.noCredentials(Self.unavailable, wantsConnection: true) == [.stop(.sessionExpired, Self.unavailable)])
        #expect(machine.state == .stopped)
    }

    @Test("the session throws while there is no network: the attempt waits for the network, uncounted")
    func credentialsUnavailableWithoutNetwork() {
        var machine = Self.linked()
        _ = machine.pathChanged(to: Self.wifi, wantsConnection: true)
        for _ in 0...ReconnectBookkeeping.credentialsRetries {
            _ = machine.pathChanged(to: .unsatisfied, wantsConnection: true)
            #expect(machine.noCredentials(Self.unavailable, wantsConnection: true) == [.waitForNetwork(reconnecting: false)])
            #expect(machine.state == .waitingForPath)
            #expect(machine.pathChanged(to: Self.wifi, wantsConnection: true).contains(.report(.connecting)))
        }
        #expect(
            machine.noCredentials(Self.unavailable, wantsConnection: true).last
                == .startBackoff(id: 0, delay: .seconds(1), attempt: 1), "the first counted failure")
    }

    @Test("an attempt that got credentials starts the count of failures in a row again")
    func credentialsUnavailableThenAnswered() {
        var machine = Self.linked()
        let retries = ReconnectBookkeeping.credentialsRetries
        #expect(!Self.credentialsFail(retries, &machine).contains(nil))
        guard case .startBackoff(let id, _, _)? = machine.linkEnded(loss: Self.retryable, acknowledged: false, wantsConnection: true).last
        else {
            Issue.record("expected a backoff")
            return
        }
        _ = machine.backoffElapsed(id: id, wantsConnection: true)
        #expect(!Self.credentialsFail(retries, &machine).contains(nil))
        #expect(machine.state != .stopped)
    }

    @Test("the policy's attempt limit stops with reconnectAttemptsExhausted")
    func attemptsExhausted() {
        var machine = Self.machine(ReconnectPolicy.exponential(base: .seconds(1), max: .seconds(10), maxAttempts: 1))
        _ = machine.start(wantsConnection: true)
        guard case .startBackoff(let id, _, _)? = machine.linkEnded(loss: Self.retryable, acknowledged: false, wantsConnection: true).last
        else {
            Issue.record("expected one backoff")
            return
        }
        _ = machine.backoffElapsed(id: id, wantsConnection: true)
        #expect(
            machine.linkEnded(loss: Self.retryable, acknowledged: false, wantsConnection: true)
                == [.stop(.failed(.reconnectAttemptsExhausted(1)), .reconnectAttemptsExhausted(1))])
    }

    @Test("the transport's requests end: finish")
    func requestsEnded() {
        var machine = Self.linked()
        #expect(machine.requestsEnded() == [.finish])
        #expect(machine.state == .stopped)
    }

    // MARK: Rotation

    @Test("rotation opens a successor only while a primary is under way")
    func rotation() {
        var linked = Self.linked()
        #expect(linked.rotationDue() == [.startLink(id: 1, role: .successor, forceRefresh: false)])
        #expect(linked.state == .linked)

        var backingOff = Self.backingOff()
        #expect(backingOff.rotationDue() == [])
    }

    // MARK: The network path

    @Test("no network before the first connection: it waits, then connects as soon as the path is satisfied")
    func waitsForTheFirstPath() {
        var machine = Self.machine()
        #expect(machine.pathChanged(to: .unsatisfied, wantsConnection: true) == [])
        #expect(machine.start(wantsConnection: true) == [.waitForNetwork(reconnecting: false)])
        #expect(machine.state == .waitingForPath)
        #expect(machine.demandChanged(wantsConnection: true) == [], "already waiting: said once")
        #expect(
            machine.pathChanged(to: Self.wifi, wantsConnection: true)
                == [
                    .pathChanged(from: .unsatisfied, to: Self.wifi), .skipWait(because: .networkBack), .report(.connecting),
                    .startLink(id: 0, role: .primary, forceRefresh: false), .probeOpenLinks(because: .networkBack),
                ])
        #expect(machine.state == .linked)
    }

    @Test("no network while backing off: the backoff is dropped; back: a reconnect at once")
    func noNetworkWhileBackingOff() {
        var machine = Self.backingOff()
        _ = machine.pathChanged(to: Self.wifi, wantsConnection: true)
        #expect(
            machine.pathChanged(to: .unsatisfied, wantsConnection: true)
                == [.pathChanged(from: Self.wifi, to: .unsatisfied), .cancelBackoff(id: 0), .waitForNetwork(reconnecting: true)])
        #expect(machine.state == .waitingForPath)
        #expect(machine.backoffElapsed(id: 0, wantsConnection: true) == [], "the dropped backoff's end is ignored")
        #expect(machine.pathChanged(to: Self.wifi, wantsConnection: true).contains(.startLink(id: 1, role: .primary, forceRefresh: false)))
    }

    @Test("a link lost while there is no network: the reconnect waits for the network, with no timer")
    func lostWithoutNetwork() {
        var machine = Self.linked()
        _ = machine.pathChanged(to: Self.wifi, wantsConnection: true)
        _ = machine.pathChanged(to: .unsatisfied, wantsConnection: true)
        #expect(
            machine.linkEnded(loss: Self.retryable, acknowledged: true, wantsConnection: true)
                == [.report(.reconnecting(attempt: 1, delay: .seconds(1))), .waitForNetwork(reconnecting: true)])
        #expect(machine.state == .waitingForPath)
    }

    @Test(
        "a link closed on request or refused once while there is no network: connecting is reported (its connected does not stand) and the reconnect waits",
        arguments: [LinkLoss.lost(.requested), .lost(.authRejected("4403"))])
    func lostAtOnceWithoutNetwork(loss: LinkLoss) {
        var machine = Self.linked()
        _ = machine.pathChanged(to: Self.wifi, wantsConnection: true)
        _ = machine.pathChanged(to: .unsatisfied, wantsConnection: true)
        #expect(
            machine.linkEnded(loss: loss, acknowledged: true, lasted: .seconds(60), wantsConnection: true)
                == [.report(.connecting), .waitForNetwork(reconnecting: true)])
        #expect(machine.state == .waitingForPath)
        #expect(
            machine.pathChanged(to: Self.wifi, wantsConnection: true)
                == [
                    .pathChanged(from: .unsatisfied, to: Self.wifi), .skipWait(because: .networkBack), .report(.connecting),
                    .startLink(id: 1, role: .primary, forceRefresh: loss != .lost(.requested)), .probeOpenLinks(because: .networkBack),
                ])
    }

    @Test("an interface change probes the open links; a supervisor waiting to reconnect connects at once")
    func interfaceChange() {
        var linked = Self.linked()
        _ = linked.pathChanged(to: Self.wifi, wantsConnection: true)
        #expect(
            linked.pathChanged(to: Self.cellular, wantsConnection: true)
                == [.pathChanged(from: Self.wifi, to: Self.cellular), .probeOpenLinks(because: .interfaceChanged)])

        var backingOff = Self.backingOff()
        _ = backingOff.pathChanged(to: Self.wifi, wantsConnection: true)
        #expect(
            backingOff.pathChanged(to: Self.cellular, wantsConnection: true)
                == [
                    .pathChanged(from: Self.wifi, to: Self.cellular), .probeOpenLinks(because: .interfaceChanged), .cancelBackoff(id: 0),
                    .skipWait(because: .interfaceChanged), .report(.connecting), .startLink(id: 1, role: .primary, forceRefresh: false),
                ])
    }

    @Test(
        "another Wi-Fi network (the same interface, other gateways) probes the open links and ends a backoff, as an interface change does")
    func gatewaysChange() {
        let home = NetworkPath.satisfied(.wifi, gateways: ["192.168.1.1:0"])
        let office = NetworkPath.satisfied(.wifi, gateways: ["10.0.0.1:0"])
        var linked = Self.linked()
        _ = linked.pathChanged(to: home, wantsConnection: true)
        #expect(
            linked.pathChanged(to: office, wantsConnection: true)
                == [.pathChanged(from: home, to: office), .probeOpenLinks(because: .gatewaysChanged)])

        var backingOff = Self.backingOff()
        _ = backingOff.pathChanged(to: home, wantsConnection: true)
        #expect(
            backingOff.pathChanged(to: office, wantsConnection: true)
                == [
                    .pathChanged(from: home, to: office), .probeOpenLinks(because: .gatewaysChanged), .cancelBackoff(id: 0),
                    .skipWait(because: .gatewaysChanged), .report(.connecting), .startLink(id: 1, role: .primary, forceRefresh: false),
                ])
    }

    @Test("the same path again, or the first path, changes nothing")
    func samePath() {
        var machine = Self.linked()
        #expect(machine.pathChanged(to: Self.wifi, wantsConnection: true) == [])
        #expect(machine.pathChanged(to: Self.wifi, wantsConnection: true) == [])
        #expect(machine.path == Self.wifi)
    }

    // MARK: The foreground probe

    @Test("verifyConnection probes the open links; while backing off, or waiting for a network, it also reconnects at once")
    func verifyConnection() {
        var linked = Self.linked()
        #expect(linked.verifyConnection(wantsConnection: true) == [.probeOpenLinks(because: .verifyConnection)])

        var backingOff = Self.backingOff()
        #expect(
            backingOff.verifyConnection(wantsConnection: true)
                == [
                    .probeOpenLinks(because: .verifyConnection), .cancelBackoff(id: 0), .skipWait(because: .verifyConnection),
                    .report(.connecting), .startLink(id: 1, role: .primary, forceRefresh: false),
                ])

        var offline = Self.backingOff()
        _ = offline.pathChanged(to: Self.wifi, wantsConnection: true)
        _ = offline.pathChanged(to: .unsatisfied, wantsConnection: true)
        // Once: the path read after a resume can be stale. Failing without a network, it waits for the network again.
        #expect(
            offline.verifyConnection(wantsConnection: true)
                == [
                    .probeOpenLinks(because: .verifyConnection), .skipWait(because: .verifyConnection), .report(.connecting),
                    .startLink(id: 1, role: .primary, forceRefresh: false),
                ])
        #expect(
            offline.linkEnded(loss: Self.retryable, acknowledged: false, wantsConnection: true)
                == [.report(.reconnecting(attempt: 2, delay: .seconds(2))), .waitForNetwork(reconnecting: true)])
        #expect(offline.state == .waitingForPath)
        #expect(
            offline.verifyConnection(wantsConnection: false) == [
                .probeOpenLinks(because: .verifyConnection), .skipWait(because: .verifyConnection), .report(.idle),
            ])
    }
}
