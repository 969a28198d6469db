/// The lifecycle of one link, as a pure state machine: events in, actions out, no I/O and no clock of its own.
///
/// The link's scope feeds it (a frame or a pong arrived, the handshake was acknowledged, a deadline passed, a probe
/// was asked for) and performs what it returns (send a ping, abort the link, start a rotation, fire a protocol
/// timer). Every timer of a link is one deadline computed here, so the scope needs a single sleeping task. Receiving a
/// frame or a pong only records the instant: deadlines derived from it move later lazily, when the timer wakes, never
/// per frame. The few events that can move the deadline earlier (acknowledgement, a protocol timer, a probe, a learned
/// `ka` interval, the answer to a ping when the pong timeout is longer than the quiet period) are reported by
/// ``needsEarlierWake``.
///
/// Liveness (``LivenessSettings``): after the quiet period the link sends a WebSocket ping; one goes out right after
/// the acknowledgement too, to learn whether the server answers pings at all. A pong marks the link as one that
/// answers; from then on a missed pong means it is dead. A first ping whose pong never comes marks it as one that
/// ignores pings: it stops pinging and uses the protocol's fallback (``LinkLiveness``) — the `ka` watchdog with the
/// learned interval (AppSync) or the protocol's ping (graphql-transport-ws). A probe while that is not known yet is
/// decided by its own deadline: nothing at all since the probe started means the link is dead.
package struct LinkStateMachine<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    private enum Phase: Sendable, Equatable {
        case handshaking(deadline: Instant, timeout: Duration)
        case open
        case ended
    }

    /// What the link knows about WebSocket pings.
    package enum PingAnswers: Sendable, Equatable {
        /// No pong yet (the first ping is out, or pings are off).
        case unknown
        /// A pong arrived: a missed pong means the link is dead.
        case answered
        /// A ping went unanswered before any pong, or the connection cannot ping: the protocol's fallback applies and
        /// the link sends no more WebSocket pings.
        case ignored
    }

    /// Whether the link's timer sleeps, and until when (kept here so a change can tell whether it must wake it).
    package enum TimerArm: Sendable, Equatable {
        /// The timer is handling a deadline and will read the next one itself.
        case awake
        /// The timer sleeps until this instant.
        case sleeping(until: Instant)
        /// Nothing was due: the timer waits to be woken.
        case idle
    }

    private struct OutstandingPing: Sendable, Equatable {
        var kind: PingKind
        var deadline: Instant
        var timeout: Duration
        /// Set while ``deadline`` is a probe's (see ``ProbeWindow``).
        var probe: ProbeWindow?
    }

    /// A probe's hold on the outstanding ping's deadline. While pings are `.unknown` a missed pong proves nothing
    /// alone, so the probe's deadline asks whether anything arrived since the probe started.
    private struct ProbeWindow: Sendable, Equatable {
        var since: Instant
        /// The first ping's own pong deadline the probe brought forward, restored when the link proved alive (its
        /// pong may still come: a 3-10 s pong must not cost the link its pings); `nil` for a ping the probe sent.
        var replacedDeadline: Instant?
        var replacedTimeout: Duration?
    }

    private enum PingKind: Sendable, Equatable {
        case webSocket
        case protocolPing
    }

    private let settings: LivenessSettings
    private var phase: Phase
    private var fallback: LinkLiveness = .none
    private var outstanding: OutstandingPing?
    private var probeRequest: (at: Instant, timeout: Duration)?
    private var lastPong: Instant?
    private var lastKeepAlive: Instant?
    private var keepAliveIntervals = 0
    private var largestKeepAliveInterval = Duration.zero
    private var latestKeepAliveInterval: Duration?
    private var rotateAt: Instant?
    private var driverTimers: [(deadline: Instant, token: Int)] = []

    /// When the last frame arrived (the socket opening counts as the first activity). WebSocket pongs are kept apart
    /// (``lastActivity`` covers both).
    package private(set) var lastReceived: Instant
    /// Whether any frame arrived at all.
    package private(set) var receivedAnything = false
    /// Whether the handshake was ever acknowledged (it stays `true` after the link ended).
    package private(set) var wasAcknowledged = false
    /// What the link learned about WebSocket pings.
    package private(set) var pingAnswers: PingAnswers = .unknown
    /// The longest interval seen between two `ka` frames, once two intervals were seen (before that, `nil`).
    package private(set) var keepAliveInterval: Duration?
    /// Maintained by the scope's timer: see ``TimerArm``.
    package var timerArm: TimerArm = .idle

    /// A link whose socket opened at `now`; the acknowledgement is due within `ackTimeout`.
    package init(openedAt now: Instant, ackTimeout: Duration, liveness settings: LivenessSettings = .default) {
        self.settings = settings
        phase = .handshaking(deadline: now.advanced(by: ackTimeout), timeout: ackTimeout)
        lastReceived = now
    }

    /// Whether the handshake was acknowledged and the link has not ended.
    package var isOpen: Bool { phase == .open }

    /// Whether the link has ended.
    package var isEnded: Bool { phase == .ended }

    /// The last sign of life of any kind: a frame or a WebSocket pong. A gap starts here.
    package var lastActivity: Instant {
        guard let lastPong, lastPong > lastReceived else { return lastReceived }
        return lastPong
    }

    /// Whether a frame or a pong arrived at all.
    package var heardAnything: Bool { receivedAnything || lastPong != nil }

    // MARK: Events

    /// A frame arrived. The hot path: a few stores. Any frame answers an outstanding protocol ping; a WebSocket ping
    /// waits for its pong. Deadlines only move later, which the timer finds out lazily.
    ///
    /// Returns whether the timer must be woken: only when the frame answered a protocol ping and the next ping is due
    /// before the pong deadline the timer sleeps for (a pong timeout longer than the quiet period). Never otherwise,
    /// so a busy link's frames wake nothing.
    @discardableResult
    package mutating func received(at now: Instant) -> Bool {
        lastReceived = now
        receivedAnything = true
        guard outstanding?.kind == .protocolPing else { return false }
        outstanding = nil
        return needsEarlierWake
    }

    /// A WebSocket pong arrived (on the connection's own thread; it does not wake the link's tasks). It is a sign of
    /// life either way; while a ping is out it answers it, and the link answers pings from now on — unless it already
    /// fell back to the protocol's check (a late pong does not undo that: a server that answers later than the pong
    /// timeout must not make the link flap). An unsolicited pong teaches nothing about pings.
    ///
    /// Returns whether the timer must be woken, as ``received(at:)`` does: the pong answered a ping and the next one is
    /// due before the pong deadline the timer sleeps for.
    @discardableResult
    package mutating func pongReceived(at now: Instant) -> Bool {
        lastPong = now
        guard outstanding?.kind == .webSocket else { return false }
        outstanding = nil
        if pingAnswers == .unknown { pingAnswers = .answered }
        return needsEarlierWake
    }

    /// A `ka` frame arrived (after ``received(at:)`` for the same frame): its interval is learned.
    package mutating func keepAliveReceived(at now: Instant) {
        if let last = lastKeepAlive {
            keepAliveIntervals += 1
            latestKeepAliveInterval = last.duration(to: now)
            largestKeepAliveInterval = max(largestKeepAliveInterval, last.duration(to: now))
            // The largest interval seen, and only once two were seen: a server that sends two `ka` in a row (at the
            // acknowledgement, say) must not teach a window that kills the link at the next regular one.
            if keepAliveIntervals >= 2 { keepAliveInterval = largestKeepAliveInterval }
        }
        lastKeepAlive = now
    }

    /// The handshake was acknowledged; `fallback` is the protocol's own liveness check. Returns `nil` if it already was
    /// (a duplicate ack changes nothing); otherwise whether to send a WebSocket ping now, to learn whether the server
    /// answers them (it is recorded as sent: call ``webSocketPingsUnavailable()`` if it could not be).
    package mutating func acknowledged(at now: Instant, fallback: LinkLiveness, rotateAfter: Duration?) -> Bool? {
        guard case .handshaking = phase else { return nil }
        phase = .open
        wasAcknowledged = true
        self.fallback = fallback
        rotateAt = rotateAfter.map { now.advanced(by: $0) }
        guard settings.webSocketPings, settings.quietPeriod != nil else {
            if !settings.webSocketPings { pingAnswers = .ignored }
            return false
        }
        outstanding = OutstandingPing(
            kind: .webSocket, deadline: now.advanced(by: settings.pongTimeout), timeout: settings.pongTimeout)
        return true
    }

    /// The connection cannot send WebSocket pings: the protocol's fallback applies from now on.
    package mutating func webSocketPingsUnavailable() {
        if outstanding?.kind == .webSocket { outstanding = nil }
        pingAnswers = .ignored
    }

    /// Asks for an immediate check that the link still works (a network interface change, the app in the foreground):
    /// a ping with `timeout` for its answer, sent by the timer at once (``nextDeadline`` becomes `now`). An outstanding
    /// ping is not repeated; its deadline is brought forward to `timeout` from now. Where the link does not know yet
    /// whether it answers pings, the probe's deadline passing with nothing received since the probe ends the link.
    /// Returns whether anything changed.
    @discardableResult
    package mutating func probe(at now: Instant, timeout: Duration) -> Bool {
        guard phase == .open else { return false }
        if var ping = outstanding {
            let deadline = now.advanced(by: timeout)
            guard deadline < ping.deadline else { return false }
            // A second probe keeps the ping's own deadline, not the first probe's: that is what the link waits for after.
            var window = ping.probe ?? ProbeWindow(since: now, replacedDeadline: ping.deadline, replacedTimeout: ping.timeout)
            window.since = now
            ping.probe = window
            ping.deadline = deadline
            ping.timeout = timeout
            outstanding = ping
            return true
        }
        guard pingKindForNextPing(includingQuiet: false) != nil else { return false }
        probeRequest = (now, timeout)
        return true
    }

    /// Schedules a protocol timer; ``deadlineReached(at:)`` returns `.driverTimer(token)` once it is due.
    package mutating func schedule(token: Int, at deadline: Instant) {
        guard phase != .ended else { return }
        driverTimers.append((deadline, token))
    }

    /// The link ended (for any reason); returns `false` if it already had. No deadline is due afterwards.
    @discardableResult
    package mutating func end() -> Bool {
        guard phase != .ended else { return false }
        phase = .ended
        driverTimers = []
        rotateAt = nil
        outstanding = nil
        probeRequest = nil
        return true
    }

    // MARK: Deadlines

    /// The AppSync `ka` watchdog's window: `connectionTimeoutMs`, or, on a link that ignores pings and has learned the
    /// `ka` interval, two intervals plus the pong timeout if that is shorter.
    private var keepAliveWindow: Duration? {
        guard case .serverKeepAlive(let limit) = fallback else { return nil }
        guard pingAnswers == .ignored, let interval = keepAliveInterval else { return limit }
        return min(limit, interval * 2 + settings.pongTimeout)
    }

    /// Which ping the link would send next: a WebSocket ping while pings are not known to be ignored, else the
    /// protocol's ping where it has one. `includingQuiet`: only when the quiet period is configured (periodic pings).
    private func pingKindForNextPing(includingQuiet: Bool) -> PingKind? {
        if includingQuiet && settings.quietPeriod == nil { return nil }
        if settings.webSocketPings && pingAnswers != .ignored { return .webSocket }
        if fallback == .protocolPing { return .protocolPing }
        return nil
    }

    /// How far a quiet-period ping may move to wait for a `ka` expected about when it is due (see ``quietDeadline``).
    package static var keepAliveGrace: Duration { .seconds(2) }

    /// When the next quiet-period ping is due, if the link pings at all.
    ///
    /// On a link with server keep-alives, a ping due within ``keepAliveGrace`` of the next `ka` (expected the latest
    /// interval after the last one) waits until that grace after it: the `ka` answers what the ping would ask, and moves the ping a
    /// quiet period later. At AWS's cadence (`ka` every 60 s, pings after 30 s quiet) the ping after a pong is due just
    /// as the `ka` is; without this the two race, and a lost race costs a ping, a pong and two wakes a minute. It delays
    /// a dead link's detection by at most twice the grace: 30 s + 4 s + the 10 s pong timeout, within 45 s.
    private var quietDeadline: Instant? {
        guard outstanding == nil, let quiet = settings.quietPeriod, pingKindForNextPing(includingQuiet: true) != nil else { return nil }
        let due = lastActivity.advanced(by: quiet)
        guard case .serverKeepAlive = fallback, let lastKeepAlive, let interval = latestKeepAliveInterval else { return due }
        let expected = lastKeepAlive.advanced(by: interval)
        let grace = Self.keepAliveGrace
        guard due > expected.advanced(by: .zero - grace), due < expected.advanced(by: grace) else { return due }
        return expected.advanced(by: grace)
    }

    /// The earliest instant at which ``deadlineReached(at:)`` has something to do; `nil` when nothing is pending.
    package var nextDeadline: Instant? {
        var earliest: Instant?
        func consider(_ instant: Instant?) {
            guard let instant else { return }
            if let current = earliest, current <= instant { return }
            earliest = instant
        }
        switch phase {
        case .ended:
            return nil
        case .handshaking(let deadline, _):
            consider(deadline)
        case .open:
            consider(outstanding?.deadline)
            consider(probeRequest?.at)
            consider(quietDeadline)
            consider(keepAliveWindow.map { lastReceived.advanced(by: $0) })
            consider(rotateAt)
        }
        for timer in driverTimers { consider(timer.deadline) }
        return earliest
    }

    /// Whether the timer must be woken because ``nextDeadline`` is now earlier than what it sleeps for (after an event
    /// that can move it earlier; a frame or pong only when it answers a ping).
    package var needsEarlierWake: Bool {
        switch timerArm {
        case .awake: false
        case .idle: nextDeadline != nil
        case .sleeping(let until): nextDeadline.map { $0 < until } ?? false
        }
    }

    /// For a timer that can move its deadline later without a wake (``LinkTimer``): the instant to move it to, when an
    /// event (a frame, a pong, a `ka`) moved ``nextDeadline`` more than `slack` past the instant the timer sleeps
    /// until; recorded as that instant. `nil` otherwise, so a busy link re-arms at most once per `slack`.
    package mutating func postponedWake(slack: Duration) -> Instant? {
        guard case .sleeping(let until) = timerArm, let next = nextDeadline, next > until.advanced(by: slack) else { return nil }
        timerArm = .sleeping(until: next)
        return next
    }

    /// Time has reached `now`: what is due, in order. A failure ends the machine and is the last action.
    package mutating func deadlineReached(at now: Instant) -> [LinkTimerAction] {
        var actions: [LinkTimerAction] = []
        let due = driverTimers.filter { $0.deadline <= now }
        if !due.isEmpty {
            driverTimers.removeAll { $0.deadline <= now }
            actions += due.sorted { $0.deadline < $1.deadline }.map { .driverTimer($0.token) }
        }
        switch phase {
        case .ended:
            return []
        case .handshaking(let deadline, let timeout):
            if now >= deadline {
                end()
                actions.append(.fail(.ackTimeout(timeout)))
            }
        case .open:
            if let rotateAt, now >= rotateAt {
                self.rotateAt = nil
                actions.append(.rotate)
            }
            if let ping = outstanding, now >= ping.deadline {
                outstanding = nil
                switch (ping.kind, pingAnswers) {
                case (.webSocket, .answered), (.protocolPing, _):
                    end()
                    actions.append(.fail(.pongTimeout(ping.timeout)))
                    return actions
                case (.webSocket, _):
                    if let probe = ping.probe, lastActivity <= probe.since {
                        // A probe asks whether the link is alive within its timeout. No pong is no answer on a link not
                        // known to answer pings, but nothing at all since the probe is: the fallback (up to
                        // connectionTimeoutMs on AppSync) must not keep a dead link the probe found.
                        end()
                        actions.append(.fail(.pongTimeout(ping.timeout)))
                        return actions
                    }
                    if let deadline = ping.probe?.replacedDeadline, let timeout = ping.probe?.replacedTimeout {
                        // Alive: the first ping's own pong deadline still decides whether the server answers pings.
                        outstanding = OutstandingPing(kind: .webSocket, deadline: deadline, timeout: timeout)
                    } else {
                        // Never answered: the server ignores pings (whether or not frames came meanwhile). The
                        // protocol's fallback judges the link from now on; this is never a reason to reconnect.
                        pingAnswers = .ignored
                        actions.append(.pingsIgnored)
                    }
                }
            }
            if let window = keepAliveWindow, now >= lastReceived.advanced(by: window) {
                end()
                actions.append(.fail(.keepAliveTimeout(window)))
                return actions
            }
            if let request = probeRequest, now >= request.at {
                probeRequest = nil
                if outstanding == nil, let kind = pingKindForNextPing(includingQuiet: false) {
                    actions.append(send(kind, at: now, timeout: request.timeout, probedAt: request.at))
                }
            }
            if let deadline = quietDeadline, now >= deadline, let kind = pingKindForNextPing(includingQuiet: true) {
                actions.append(send(kind, at: now, timeout: settings.pongTimeout))
            }
        }
        return actions
    }

    private mutating func send(_ kind: PingKind, at now: Instant, timeout: Duration, probedAt: Instant? = nil) -> LinkTimerAction {
        outstanding = OutstandingPing(
            kind: kind, deadline: now.advanced(by: timeout), timeout: timeout,
            probe: probedAt.map { ProbeWindow(since: $0, replacedDeadline: nil, replacedTimeout: nil) })
        return kind == .webSocket ? .sendPing : .sendProtocolPing
    }
}

/// The protocol's own way to tell that an open link is alive, used where the server does not answer WebSocket pings.
package enum LinkLiveness: Sendable, Equatable {
    /// The server sends keep-alives (AppSync `ka`, which the driver marks as ``LinkFrameStep/keepAlive``); silence for
    /// this long (`connectionTimeoutMs`) means the link is dead, whatever the pings say. On a link that ignores pings
    /// the window shrinks to two learned `ka` intervals plus the pong timeout.
    case serverKeepAlive(Duration)
    /// The protocol has a ping of its own (``LinkDriver/pingMessage()``: graphql-transport-ws `ping`), answered by any
    /// frame.
    case protocolPing
    /// Nothing beyond WebSocket pings.
    case none
}

/// Why the machine declared the link dead.
package enum LinkFailure: Sendable, Equatable {
    /// No acknowledgement within the ack timeout.
    case ackTimeout(Duration)
    /// No frame within the server's keep-alive window.
    case keepAliveTimeout(Duration)
    /// No pong within the timeout after a ping (a WebSocket ping on a link that answers them, or the protocol's).
    case pongTimeout(Duration)
}

/// What the scope must do when a deadline passed.
package enum LinkTimerAction: Sendable, Equatable {
    /// Send a WebSocket ping (call ``LinkStateMachine/webSocketPingsUnavailable()`` if the connection cannot).
    case sendPing
    /// Send the protocol's ping (``LinkDriver/pingMessage()``).
    case sendProtocolPing
    /// The link's first ping went unanswered: it ignores pings and uses the protocol's fallback from now on (logged).
    case pingsIgnored
    /// The link is dead: abort it at once.
    case fail(LinkFailure)
    /// The connection reached its rotation lead: start replacing it.
    case rotate
    /// A protocol timer the driver scheduled is due.
    case driverTimer(Int)
}
