/// The lifecycle of one link, as a pure state machine: events in, actions out, no I/O and no clock of its own.
///
/// The link's scope feeds it (a frame arrived, the handshake was acknowledged, a deadline passed) and performs what it
/// returns (send a ping, abort the link, start a rotation, fire a protocol timer). Every timer of a link is one
/// deadline computed here, so the scope needs a single sleeping task. Receiving a frame only records the instant:
/// deadlines derived from it move later lazily, when the timer wakes, never per frame.
package struct LinkStateMachine<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    private enum Phase: Sendable, Equatable {
        case handshaking(deadline: Instant, timeout: Duration)
        case open
        case ended
    }

    private var phase: Phase
    private var liveness: LinkLiveness = .none
    private var pingSentAt: Instant?
    private var rotateAt: Instant?
    private var driverTimers: [(deadline: Instant, token: Int)] = []

    /// When the last frame of any kind arrived (the socket opening counts as the first activity).
    package private(set) var lastReceived: Instant
    /// Whether any frame arrived at all.
    package private(set) var receivedAnything = false
    /// Whether the handshake was ever acknowledged (it stays `true` after the link ended).
    package private(set) var wasAcknowledged = false

    /// A link whose socket opened at `now`; the acknowledgement is due within `ackTimeout`.
    package init(openedAt now: Instant, ackTimeout: Duration) {
        phase = .handshaking(deadline: now.advanced(by: ackTimeout), timeout: ackTimeout)
        lastReceived = now
    }

    /// Whether the handshake was acknowledged and the link has not ended.
    package var isOpen: Bool { phase == .open }

    /// Whether the link has ended.
    package var isEnded: Bool { phase == .ended }

    /// A frame arrived. The hot path: a few stores. Returns `true` when it answered an outstanding ping: the next
    /// deadline then moves from the pong timeout to the next ping, which may be earlier, so the timer must re-arm.
    /// (Every other frame only moves deadlines later, which the timer finds out lazily.)
    @discardableResult
    package mutating func received(at now: Instant) -> Bool {
        lastReceived = now
        receivedAnything = true
        guard pingSentAt != nil else { return false }
        pingSentAt = nil
        return true
    }

    /// The handshake was acknowledged; returns `false` if it already was (a duplicate ack changes nothing).
    package mutating func acknowledged(at now: Instant, liveness: LinkLiveness, rotateAfter: Duration?) -> Bool {
        guard case .handshaking = phase else { return false }
        phase = .open
        wasAcknowledged = true
        self.liveness = liveness
        rotateAt = rotateAfter.map { now.advanced(by: $0) }
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
        return true
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
            switch liveness {
            case .serverKeepAlive(let timeout):
                consider(lastReceived.advanced(by: timeout))
            case .clientPing(let interval, let timeout):
                consider(pingSentAt.map { $0.advanced(by: timeout) } ?? lastReceived.advanced(by: interval))
            case .none:
                break
            }
            consider(rotateAt)
        }
        for timer in driverTimers { consider(timer.deadline) }
        return earliest
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
            switch liveness {
            case .serverKeepAlive(let timeout):
                if now >= lastReceived.advanced(by: timeout) {
                    end()
                    actions.append(.fail(.keepAliveTimeout(timeout)))
                }
            case .clientPing(let interval, let timeout):
                if let sent = pingSentAt {
                    if now >= sent.advanced(by: timeout) {
                        end()
                        actions.append(.fail(.pongTimeout(timeout)))
                    }
                } else if now >= lastReceived.advanced(by: interval) {
                    pingSentAt = now
                    actions.append(.sendPing)
                }
            case .none:
                break
            }
        }
        return actions
    }
}

/// How the link proves it is alive once acknowledged.
package enum LinkLiveness: Sendable, Equatable {
    /// The server sends keep-alives: silence for this long means the link is dead (AppSync `ka`).
    case serverKeepAlive(Duration)
    /// The client pings after `interval` of silence; silence for `timeout` after the ping means the link is
    /// dead (graphql-transport-ws `ping`/`pong`). Any frame after the ping counts as an answer.
    case clientPing(interval: Duration, timeout: Duration)
    /// No liveness check.
    case none
}

/// Why the machine declared the link dead.
package enum LinkFailure: Sendable, Equatable {
    /// No acknowledgement within the ack timeout.
    case ackTimeout(Duration)
    /// No frame within the server's keep-alive window.
    case keepAliveTimeout(Duration)
    /// No frame within the pong timeout after a ping.
    case pongTimeout(Duration)
}

/// What the scope must do when a deadline passed.
package enum LinkTimerAction: Sendable, Equatable {
    /// Send the protocol's ping.
    case sendPing
    /// The link is dead: abort it at once.
    case fail(LinkFailure)
    /// The connection reached its rotation lead: start replacing it.
    case rotate
    /// A protocol timer the driver scheduled is due.
    case driverTimer(Int)
}
