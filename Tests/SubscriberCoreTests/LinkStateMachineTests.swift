import RealtimeTesting
import Testing

@testable import SubscriberCore

/// One step of a liveness script: an event fed to the machine, or what it must say at that point. Times are whole
/// seconds on a manual clock.
enum LivenessStep: Sendable, CustomStringConvertible {
    /// The acknowledgement at `at` with the protocol's fallback; `pingNow`: whether the machine asks for a ping at once.
    case ack(Int, LinkLiveness, pingNow: Bool)
    /// A frame arrived.
    case frame(Int)
    /// A `ka` frame arrived (a frame, marked as the server's keep-alive).
    case ka(Int)
    /// A WebSocket pong arrived.
    case pong(Int)
    /// The connection could not send the ping it was asked for.
    case unavailable
    /// A probe asked at `at` with `timeout`; `changes`: whether the machine says anything changed.
    case probe(Int, timeout: Int, changes: Bool)
    /// The timer woke at `at`; these actions are due, in order.
    case due(Int, [LinkTimerAction])
    /// The next deadline is at this second (`nil`: none).
    case next(Int?)
    /// What the link knows about pings.
    case answers(LinkStateMachine<ManualClock.Instant>.PingAnswers)

    var description: String {
        switch self {
        case .ack(let at, let fallback, let pingNow): "ack(\(at), \(fallback), pingNow: \(pingNow))"
        case .frame(let at): "frame(\(at))"
        case .ka(let at): "ka(\(at))"
        case .pong(let at): "pong(\(at))"
        case .unavailable: "unavailable"
        case .probe(let at, let timeout, let changes): "probe(\(at), timeout: \(timeout), changes: \(changes))"
        case .due(let at, let actions): "due(\(at), \(actions))"
        case .next(let at): "next(\(at.map(String.init) ?? "nil"))"
        case .answers(let answers): "answers(\(answers))"
        }
    }
}

/// A named liveness script.
struct LivenessScript: Sendable, CustomTestStringConvertible {
    var name: String
    var settings = LivenessSettings()
    var steps: [LivenessStep]
    var testDescription: String { name }
}

private func at(_ seconds: Int) -> ManualClock.Instant { ManualClock.Instant(offset: .seconds(seconds)) }

/// Every transition of the liveness logic, as tables: pings after the quiet period, pongs, learning whether a link
/// answers pings, the fallbacks (AppSync's learned `ka` watchdog, graphql-transport-ws's own ping), probes.
@Suite("LinkStateMachine")
struct LinkStateMachineTests {
    private typealias Machine = LinkStateMachine<ManualClock.Instant>
    private static let appSync = LinkLiveness.serverKeepAlive(.seconds(300))
    private static let graphQL = LinkLiveness.protocolPing

    static let scripts: [LivenessScript] = [
        LivenessScript(
            name: "one ping at the ack; a pong marks the link as answering; then a ping after each quiet period; frames move it lazily",
            steps: [
                .ack(0, graphQL, pingNow: true), .next(10), .answers(.unknown),
                .pong(0), .answers(.answered), .next(30),
                .due(10, []), .next(30),
                .due(30, [.sendPing]), .next(40),
                .pong(31), .next(61),
                .frame(50), .next(80),
                .due(61, []), .next(80),
                .due(80, [.sendPing]), .next(90),
                .due(90, [.fail(.pongTimeout(.seconds(10)))]), .next(nil),
            ]),
        LivenessScript(
            name: "on a link that answers pings, frames do not answer a ping: a missed pong is death",
            steps: [
                .ack(0, appSync, pingNow: true), .pong(1), .due(31, [.sendPing]), .frame(35), .frame(40),
                .due(41, [.fail(.pongTimeout(.seconds(10)))]),
            ]),
        LivenessScript(
            name:
                "first ping unanswered while frames flow: ignores pings; GraphQL falls back to its protocol ping; a late pong changes nothing",
            steps: [
                .ack(0, graphQL, pingNow: true), .frame(5), .due(10, [.pingsIgnored]), .answers(.ignored), .next(35),
                .due(35, [.sendProtocolPing]), .next(45),
                .frame(36), .next(66),
                .pong(40), .answers(.ignored), .next(70),
                .due(70, [.sendProtocolPing]), .due(80, [.fail(.pongTimeout(.seconds(10)))]),
            ]),
        LivenessScript(
            name: "first ping unanswered and nothing at all: the fallback decides (GraphQL: protocol ping at 30 s, dead at 40 s)",
            steps: [
                .ack(0, graphQL, pingNow: true), .due(10, [.pingsIgnored]), .next(30),
                .due(30, [.sendProtocolPing]), .due(40, [.fail(.pongTimeout(.seconds(10)))]),
            ]),
        LivenessScript(
            name:
                "AppSync ignoring pings: no more pings; the ka interval is learned after two intervals: 2 × 60 + 10 s of silence is death",
            steps: [
                .ack(0, appSync, pingNow: true), .ka(0), .due(10, [.pingsIgnored]), .next(300),
                .ka(60), .next(360),
                .ka(120), .next(250),
                .due(249, []), .next(250),
                .due(250, [.fail(.keepAliveTimeout(.seconds(130)))]),
            ]),
        LivenessScript(
            name: "AppSync answering pings: a learned ka interval does not shorten the watchdog; answered pings judge the link",
            steps: [
                .ack(0, appSync, pingNow: true), .ka(0), .pong(0), .ka(60), .ka(120), .pong(120), .next(150),
                .due(150, [.sendPing]), .pong(150), .due(182, [.sendPing]), .pong(182), .due(212, [.sendPing]), .pong(212),
                .due(242, [.sendPing]), .pong(242), .due(250, []), .next(272),
            ]),
        LivenessScript(
            name: "the learned ka window is never later than connectionTimeoutMs",
            steps: [
                .ack(0, .serverKeepAlive(.seconds(100)), pingNow: true), .ka(0), .due(10, [.pingsIgnored]),
                .ka(60), .ka(120), .next(220), .due(220, [.fail(.keepAliveTimeout(.seconds(100)))]),
            ]),
        LivenessScript(
            name: "two ka in a row do not teach a short window: the largest of two intervals counts",
            steps: [
                .ack(0, appSync, pingNow: true), .due(10, [.pingsIgnored]),
                .ka(11), .ka(12), .next(312), .ka(72), .next(202), .due(201, []), .due(202, [.fail(.keepAliveTimeout(.seconds(130)))]),
            ]),
        LivenessScript(
            name: "AppSync answering pings: connectionTimeoutMs still holds, and pongs are no protocol frames for it",
            steps: [
                .ack(0, .serverKeepAlive(.seconds(100)), pingNow: true), .pong(0),
                .due(30, [.sendPing]), .pong(30), .next(60),
                .due(60, [.sendPing]), .pong(60), .due(90, [.sendPing]), .pong(90), .next(100),
                .due(100, [.fail(.keepAliveTimeout(.seconds(100)))]),
            ]),
        LivenessScript(
            name:
                "AWS's cadence: a ping due within 2 s of the expected ka waits 2 s past it; the ka moves it on; a missing ka is found in 42 s",
            steps: [
                .ack(0, appSync, pingNow: true), .ka(0), .pong(0), .next(30),
                .due(30, [.sendPing]), .pong(30), .next(60),  // one ka so far: no interval known, no wait
                .ka(60), .next(90), .due(90, [.sendPing]), .pong(90), .next(122),  // the ka is expected at 120
                .ka(120), .next(150), .due(150, [.sendPing]), .pong(150), .next(182),
                .due(180, []), .due(182, [.sendPing]), .due(192, [.fail(.pongTimeout(.seconds(10)))]),
            ]),
        LivenessScript(
            name: "a ping due well away from the expected ka keeps its quiet period",
            steps: [
                .ack(0, appSync, pingNow: true), .ka(0), .pong(0), .ka(60), .next(90), .frame(100), .next(130),
                .due(130, [.sendPing]), .pong(131), .next(161),
            ]),
        LivenessScript(
            name: "a probe pings at once with the short timeout: a pong keeps the link, silence ends it",
            steps: [
                .ack(0, graphQL, pingNow: true), .pong(0),
                .probe(5, timeout: 3, changes: true), .next(5), .due(5, [.sendPing]), .next(8), .pong(6), .next(36),
                .probe(7, timeout: 3, changes: true), .due(7, [.sendPing]), .due(10, [.fail(.pongTimeout(.seconds(3)))]),
            ]),
        LivenessScript(
            name: "a probe while a ping is out brings its deadline forward instead of pinging again (never later)",
            steps: [
                .ack(0, appSync, pingNow: true), .pong(0), .due(30, [.sendPing]),
                .probe(31, timeout: 20, changes: false), .next(40),
                .probe(32, timeout: 3, changes: true), .next(35),
                .due(35, [.fail(.pongTimeout(.seconds(3)))]),
            ]),
        LivenessScript(
            name: "a probe during the first ping on a dead AppSync link: its own deadline ends it, not the 300 s ka watchdog",
            steps: [
                .ack(0, appSync, pingNow: true), .probe(2, timeout: 3, changes: true), .next(5),
                .due(5, [.fail(.pongTimeout(.seconds(3)))]), .next(nil),
            ]),
        LivenessScript(
            name: "a probe during the first ping on a dead GraphQL link: a frame from before the probe is no answer",
            steps: [
                .ack(0, graphQL, pingNow: true), .frame(1), .probe(2, timeout: 3, changes: true),
                .due(5, [.fail(.pongTimeout(.seconds(3)))]),
            ]),
        LivenessScript(
            name: "a probe during the first ping, a frame since: alive; the first ping keeps its deadline and a pong at 7 s counts",
            steps: [
                .ack(0, appSync, pingNow: true), .probe(2, timeout: 3, changes: true), .frame(4),
                .due(5, []), .answers(.unknown), .next(10),
                .pong(7), .answers(.answered), .next(37),
            ]),
        LivenessScript(
            name: "a probe during the first ping, frames but never a pong: still only teaches that the link ignores pings",
            steps: [
                .ack(0, graphQL, pingNow: true), .probe(2, timeout: 3, changes: true), .frame(4),
                .due(5, []), .next(10), .due(10, [.pingsIgnored]), .answers(.ignored), .next(34),
            ]),
        LivenessScript(
            name: "two probes during the first ping: the later one's start counts, the first ping's own deadline is kept",
            steps: [
                .ack(0, appSync, pingNow: true), .probe(2, timeout: 5, changes: true), .probe(3, timeout: 2, changes: true),
                .frame(4), .due(5, []), .next(10),
                .probe(6, timeout: 3, changes: true), .due(9, [.fail(.pongTimeout(.seconds(3)))]),
            ]),
        LivenessScript(
            name: "a probe on an AppSync link that ignores pings has nothing to send: the ka watchdog stands",
            steps: [.ack(0, appSync, pingNow: true), .due(10, [.pingsIgnored]), .probe(20, timeout: 3, changes: false), .next(300)]),
        LivenessScript(
            name: "a probe on a GraphQL link that ignores pings sends the protocol's ping with the probe timeout",
            steps: [
                .ack(0, graphQL, pingNow: true), .due(10, [.pingsIgnored]), .probe(20, timeout: 3, changes: true),
                .due(20, [.sendProtocolPing]), .due(23, [.fail(.pongTimeout(.seconds(3)))]),
            ]),
        LivenessScript(
            name:
                "quietPeriod nil: no pings at all and AppSync keeps its watchdog; a probe still pings, unanswered while frames come it only teaches",
            settings: LivenessSettings(quietPeriod: nil),
            steps: [
                .ack(0, appSync, pingNow: false), .answers(.unknown), .next(300),
                .probe(5, timeout: 3, changes: true), .due(5, [.sendPing]), .frame(6), .due(8, [.pingsIgnored]), .next(306),
            ]),
        LivenessScript(
            name: "quietPeriod nil: a probe's ping unanswered and nothing else since the probe: the link is dead",
            settings: LivenessSettings(quietPeriod: nil),
            steps: [
                .ack(0, appSync, pingNow: false), .probe(5, timeout: 3, changes: true), .due(5, [.sendPing]),
                .due(8, [.fail(.pongTimeout(.seconds(3)))]),
            ]),
        LivenessScript(
            name: "an unsolicited pong is a sign of life but no answer: the link still learns from its pings",
            settings: LivenessSettings(quietPeriod: nil),
            steps: [
                .ack(0, graphQL, pingNow: false), .pong(5), .answers(.unknown),
                .probe(6, timeout: 3, changes: true), .due(6, [.sendPing]), .frame(7), .due(9, [.pingsIgnored]),
            ]),
        LivenessScript(
            name: "quietPeriod nil on GraphQL: nothing is due at all",
            settings: LivenessSettings(quietPeriod: nil),
            steps: [.ack(0, graphQL, pingNow: false), .next(nil)]),
        LivenessScript(
            name: "webSocketPings off: the protocol's check from the start",
            settings: LivenessSettings(webSocketPings: false),
            steps: [.ack(0, graphQL, pingNow: false), .answers(.ignored), .next(30), .due(30, [.sendProtocolPing]), .next(40)]),
        LivenessScript(
            name: "a connection that cannot ping: the fallback at once",
            steps: [.ack(0, graphQL, pingNow: true), .unavailable, .answers(.ignored), .next(30), .due(30, [.sendProtocolPing])]),
        LivenessScript(
            name: "a connection that cannot ping on AppSync: the ka watchdog alone",
            steps: [
                .ack(0, appSync, pingNow: true), .unavailable, .next(300), .due(299, []),
                .due(300, [.fail(.keepAliveTimeout(.seconds(300)))]),
            ]),
    ]

    @Test("liveness transitions", arguments: scripts)
    func liveness(script: LivenessScript) {
        var machine = Machine(openedAt: at(0), ackTimeout: .seconds(15), liveness: script.settings)
        for (index, step) in script.steps.enumerated() {
            let where_ = "step \(index): \(step)"
            switch step {
            case .ack(let time, let fallback, let pingNow):
                machine.received(at: at(time))
                let answer = machine.acknowledged(at: at(time), fallback: fallback, rotateAfter: nil)
                #expect(answer == pingNow, "\(where_)")
            case .frame(let time):
                machine.received(at: at(time))
            case .ka(let time):
                machine.received(at: at(time))
                machine.keepAliveReceived(at: at(time))
            case .pong(let time):
                machine.pongReceived(at: at(time))
            case .unavailable:
                machine.webSocketPingsUnavailable()
            case .probe(let time, let timeout, let changes):
                let changed = machine.probe(at: at(time), timeout: .seconds(timeout))
                #expect(changed == changes, "\(where_)")
            case .due(let time, let actions):
                let due = machine.deadlineReached(at: at(time))
                #expect(due == actions, "\(where_)")
                // Whatever was due is done: the timer never spins on a deadline it cannot act on.
                #expect(
                    machine.nextDeadline.map { $0 > at(time) } ?? true,
                    "\(where_): next deadline \(String(describing: machine.nextDeadline))")
            case .next(let time):
                #expect(machine.nextDeadline == time.map(at), "\(where_)")
            case .answers(let answers):
                #expect(machine.pingAnswers == answers, "\(where_)")
            }
        }
    }

    @Test("no acknowledgement by the ack deadline fails the link; a second ack changes nothing")
    func ackTimeout() {
        var machine = Machine(openedAt: at(0), ackTimeout: .seconds(15))
        #expect(machine.nextDeadline == at(15))
        let early = machine.deadlineReached(at: at(14))
        #expect(early.isEmpty)
        let due = machine.deadlineReached(at: at(15))
        #expect(due == [.fail(.ackTimeout(.seconds(15)))])
        #expect(machine.isEnded)
        #expect(machine.nextDeadline == nil)
        let late = machine.acknowledged(at: at(16), fallback: .none, rotateAfter: nil)
        #expect(late == nil)

        var open = Machine(openedAt: at(0), ackTimeout: .seconds(15))
        let first = open.acknowledged(at: at(1), fallback: .none, rotateAfter: nil)
        let duplicate = open.acknowledged(at: at(2), fallback: .protocolPing, rotateAfter: nil)
        #expect(first == true)
        #expect(duplicate == nil, "a duplicate ack")
        #expect(open.isOpen)
    }

    @Test("rotation and driver timers come due once, in order")
    func rotationAndDriverTimers() {
        var machine = Machine(openedAt: at(0), ackTimeout: .seconds(15), liveness: LivenessSettings(quietPeriod: nil))
        _ = machine.acknowledged(at: at(0), fallback: .none, rotateAfter: .seconds(100))
        machine.schedule(token: 7, at: at(20))
        machine.schedule(token: 3, at: at(10))
        #expect(machine.nextDeadline == at(10))
        let timers = machine.deadlineReached(at: at(20))
        #expect(timers == [.driverTimer(3), .driverTimer(7)])
        #expect(machine.nextDeadline == at(100))
        let rotation = machine.deadlineReached(at: at(100))
        #expect(rotation == [.rotate])
        #expect(machine.nextDeadline == nil)
    }

    @Test("after the end nothing is due, and the last sign of life (a frame or a pong) stays known")
    func endedMachine() {
        var machine = Machine(openedAt: at(0), ackTimeout: .seconds(15))
        machine.received(at: at(2))
        machine.pongReceived(at: at(4))
        #expect(machine.lastActivity == at(4), "a pong is a sign of life too")
        machine.received(at: at(3))
        #expect(machine.lastActivity == at(4))
        let ended = machine.end()
        let endedAgain = machine.end()
        #expect(ended && !endedAgain)
        machine.schedule(token: 1, at: at(5))
        #expect(machine.nextDeadline == nil)
        let due = machine.deadlineReached(at: at(100))
        #expect(due.isEmpty)
        #expect(machine.lastReceived == at(3))
        #expect(machine.heardAnything)
        #expect(!machine.wasAcknowledged)
        let probed = machine.probe(at: at(101), timeout: .seconds(3))
        #expect(!probed)
    }

    @Test("the timer is woken only when a deadline moved earlier than it sleeps for")
    func earlierWake() {
        var machine = Machine(openedAt: at(0), ackTimeout: .seconds(15))
        _ = machine.acknowledged(at: at(0), fallback: .protocolPing, rotateAfter: nil)
        machine.pongReceived(at: at(0))
        #expect(machine.nextDeadline == at(30))
        machine.timerArm = .sleeping(until: at(30))
        machine.received(at: at(5))
        machine.pongReceived(at: at(6))
        #expect(!machine.needsEarlierWake, "frames and pongs only move deadlines later")
        machine.schedule(token: 1, at: at(40))
        #expect(!machine.needsEarlierWake, "a later protocol timer waits")
        machine.schedule(token: 2, at: at(20))
        #expect(machine.needsEarlierWake, "an earlier protocol timer wakes it")
        machine.timerArm = .awake
        #expect(!machine.needsEarlierWake, "an awake timer reads the deadline itself")
        machine.timerArm = .idle
        #expect(machine.needsEarlierWake, "an idle timer is woken for any deadline")
        machine.timerArm = .sleeping(until: at(20))
        let probed = machine.probe(at: at(10), timeout: .seconds(3))
        #expect(probed)
        #expect(machine.needsEarlierWake, "a probe is due at once")
    }

    @Test("a sign of life moves the link's own timer only once the deadline moved more than the slack past its sleep")
    func postponedWake() {
        func ms(_ milliseconds: Int) -> ManualClock.Instant { ManualClock.Instant(offset: .milliseconds(milliseconds)) }
        var machine = Machine(openedAt: at(0), ackTimeout: .seconds(15))
        _ = machine.acknowledged(at: at(0), fallback: Self.appSync, rotateAfter: nil)
        machine.pongReceived(at: at(0))
        machine.timerArm = .sleeping(until: at(30))
        #expect(machine.postponedWake(slack: .seconds(1)) == nil, "nothing moved")
        machine.received(at: ms(900))
        #expect(machine.postponedWake(slack: .seconds(1)) == nil, "moved by less than the slack: the timer wakes early once")
        machine.received(at: at(5))
        #expect(machine.postponedWake(slack: .seconds(1)) == at(35))
        #expect(machine.timerArm == .sleeping(until: at(35)), "recorded: the next frame compares with the moved deadline")
        machine.received(at: ms(5_500))
        #expect(machine.postponedWake(slack: .seconds(1)) == nil, "a busy link re-arms at most once per slack")
        machine.pongReceived(at: at(20))
        #expect(machine.postponedWake(slack: .seconds(1)) == at(50), "an unsolicited pong is a sign of life too")
        machine.received(at: at(25))
        machine.timerArm = .awake
        #expect(machine.postponedWake(slack: .seconds(1)) == nil, "an awake timer reads its deadline itself")
        machine.timerArm = .idle
        #expect(machine.postponedWake(slack: .seconds(1)) == nil, "an idle timer sleeps on nothing")
    }

    @Test("the answer to a ping wakes the timer only when the next ping is due before the pong deadline it sleeps for")
    func answerWakesForLongPongTimeouts() throws {
        // WebSocket pings, the pong timeout (60 s) longer than the quiet period (5 s): the pong must wake the timer.
        var long = Machine(
            openedAt: at(0), ackTimeout: .seconds(15), liveness: LivenessSettings(quietPeriod: .seconds(5), pongTimeout: .seconds(60)))
        let pingNow = long.acknowledged(at: at(0), fallback: .protocolPing, rotateAfter: nil)
        #expect(pingNow == true)
        long.timerArm = try .sleeping(until: #require(long.nextDeadline))
        let pongWakes = long.pongReceived(at: at(1))
        #expect(pongWakes, "the next ping (6 s) is due before the pong deadline (60 s)")
        #expect(long.nextDeadline == at(6))

        // The protocol's ping, answered by any frame.
        var protocolPing = Machine(
            openedAt: at(0), ackTimeout: .seconds(15),
            liveness: LivenessSettings(quietPeriod: .seconds(5), pongTimeout: .seconds(60), webSocketPings: false))
        _ = protocolPing.acknowledged(at: at(0), fallback: .protocolPing, rotateAfter: nil)
        let due = protocolPing.deadlineReached(at: at(5))
        #expect(due == [.sendProtocolPing])
        protocolPing.timerArm = try .sleeping(until: #require(protocolPing.nextDeadline))
        let answerWakes = protocolPing.received(at: at(6))
        #expect(answerWakes, "the answer moves the next ping (11 s) before the pong deadline (65 s)")
        let frameWakes = protocolPing.received(at: at(7))
        #expect(!frameWakes, "a frame with no ping out wakes nothing")

        // The defaults: the pong deadline (10 s) comes before the next ping (31 s); the timer finds it when it wakes.
        var defaults = Machine(openedAt: at(0), ackTimeout: .seconds(15))
        let defaultPingNow = defaults.acknowledged(at: at(0), fallback: .protocolPing, rotateAfter: nil)
        #expect(defaultPingNow == true)
        defaults.timerArm = try .sleeping(until: #require(defaults.nextDeadline))
        let defaultWakes = defaults.pongReceived(at: at(1))
        #expect(!defaultWakes)
    }
}
