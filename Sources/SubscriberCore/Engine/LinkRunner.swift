import Foundation
import Logging

/// Runs one link as a structured scope: open the socket through the seam, then, in one task group, the reader (every
/// frame through the ``LinkStateMachine`` and the driver, on the reading task: no hop per frame), the timer (the one
/// deadline the state machine computes: pings, pong and keep-alive timeouts, rotation, protocol timers) and the writer
/// (what the driver has to send). Pongs are recorded by the connection's pong handler on the connection's own thread,
/// waking no task. The scope ends at the first ending — the server closed, the state machine declared the link dead,
/// the driver or the transport asked — and nothing of the link outlives it.
///
/// When the connection offers its own thread (``WebSocketConnection/linkExecutor``: NIO's event loop), the whole scope
/// runs there and, on the real clock, the timer sleeps on that thread's timers: an idle link then wakes one thread,
/// once per frame or deadline, instead of a dispatch timer thread and a pool thread each time. Where the executor also
/// offers a timer of the link's own (``LinkExecutor/makeTimer()``: a `timerfd` on Linux), a sign of life moves that
/// timer's deadline later, so the thread does not wake at a deadline the sign of life made obsolete.
package struct LinkRunner<C: Clock>: Sendable where C.Duration == Duration {
    package let clock: C
    package let wallClock: WallClock
    package let logger: Logger
    /// How long the upgrade and then the protocol acknowledgement may each take.
    package let ackTimeout: Duration
    /// When to call ``LinkDriver/rotationDue()`` after the acknowledgement; `nil` never.
    package let rotateAfter: Duration?
    /// Pings, pong timeouts and probes.
    package let liveness: LivenessSettings
    /// Whether the timer may sleep on a connection's own timers (``WebSocketConnection/linkExecutor``): only when
    /// `clock` is real time, which those timers share; a test's clock keeps its own sleeps.
    private let sleepsOnConnectionTimers: Bool
    /// How far past the timer's sleep a sign of life must move the next deadline before the link re-arms its own timer
    /// (``LinkStateMachine/postponedWake(slack:)``): by default a busy link re-arms at most once a second.
    private let postponeSlack: Duration

    package init(
        clock: C, wallClock: WallClock, logger: Logger, ackTimeout: Duration, rotateAfter: Duration?,
        liveness: LivenessSettings = .default, postponeSlack: Duration = .seconds(1)
    ) {
        self.clock = clock
        self.wallClock = wallClock
        self.logger = logger
        self.ackTimeout = ackTimeout
        self.rotateAfter = rotateAfter
        self.liveness = liveness
        self.postponeSlack = postponeSlack
        self.sleepsOnConnectionTimers = clock is ContinuousClock || clock is SuspendingClock
    }

    /// Opens a link with `request`, runs it with `driver` until it ends, and reports how. While the link is open it is
    /// in `registry` (so the supervisor can probe it).
    package func run(
        id: Int, connector: any WebSocketConnector, request: WebSocketRequest, driver: any LinkDriver, registry: LinkRegistry? = nil
    ) async -> LinkReport {
        let started = OneShotSignal<Void>()
        return await withTaskGroup(of: LinkReport?.self) { group in
            group.addTask {
                do {
                    let scoped = try await connector.withConnection(request) { connection in
                        started.fire()
                        // On the connection's own thread when it offers one: an idle link then wakes only that thread.
                        guard let executor = connection.linkExecutor else {
                            return await scope(id: id, connection: connection, driver: driver, registry: registry, timer: nil)
                        }
                        return await executor.run {
                            let timer = sleepsOnConnectionTimers ? await executor.makeTimer() : nil
                            defer { timer?.close() }
                            return await scope(id: id, connection: connection, driver: driver, registry: registry, timer: timer)
                        }
                    }
                    var report = scoped.value
                    report.close = scoped.close
                    return report
                } catch {
                    let authRejected = (error as? WebSocketSeamError)?.isAuthenticationRejection ?? false
                    return LinkReport(end: .openFailed(String(describing: error), authRejected: authRejected))
                }
            }
            // The upgrade itself may stall (a server that accepts TCP and never answers): give it the ack timeout.
            group.addTask {
                let opened = await race(clock: clock, deadline: clock.now.advanced(by: ackTimeout), signal: started)
                return opened ? nil : LinkReport(end: .openFailed("no WebSocket upgrade within \(ackTimeout)", authRejected: false))
            }
            var result: LinkReport?
            while let next = await group.next() {
                guard let report = next else { continue }
                result = result ?? report
                group.cancelAll()
            }
            return result ?? LinkReport(end: .requested)
        }
    }

    private enum Ended: Sendable {
        case reader(LinkEnd)
        case timer(LinkEnd)
        case control(LinkControl.Ending)
    }

    /// The link's scope: everything here ends when the first of its tasks reports an ending.
    private func scope(
        id: Int, connection: any WebSocketConnection, driver: any LinkDriver, registry: LinkRegistry?, timer: (any LinkTimer)?
    ) async -> LinkReport {
        let machine = Locked(LinkStateMachine(openedAt: clock.now, ackTimeout: ackTimeout, liveness: liveness))
        let postpone = Postponer(timer: timer, machine: machine, slack: postponeSlack)
        let timerPoke = Locked(OneShotSignal<Void>())
        let (wakes, wakeContinuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let controlEnding = OneShotSignal<LinkControl.Ending>()
        let ended = OneShotSignal<Ended>()
        let clock = clock
        let control = LinkControl(
            id: id, ending: controlEnding,
            wakeWriter: { wakeContinuation.yield() },
            scheduleTimer: { delay, token in
                let now = clock.now
                let wake = machine.withLock { machine in
                    machine.schedule(token: token, at: now.advanced(by: delay))
                    return machine.needsEarlierWake
                }
                if wake { timerPoke.withLock { $0 }.fire() }
            },
            probe: { timeout in
                let now = clock.now
                if machine.withLock({ $0.probe(at: now, timeout: timeout) && $0.needsEarlierWake }) { timerPoke.withLock { $0 }.fire() }
            })
        // On the connection's thread, before any ping can go out: a store under the lock, no task woken; the link's own
        // timer, if it has one, moves to the later deadline.
        connection.onPong {
            let now = clock.now
            if machine.withLock({ $0.pongReceived(at: now) }) { timerPoke.withLock { $0 }.fire() } else { postpone(at: now) }
        }

        let handshake = driver.handshakeMessages()
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await read(connection, driver, machine, control, registry, timerPoke, postpone, ended)
            }
            group.addTask { await runTimer(connection, driver, machine, timer, timerPoke, ended) }
            group.addTask { await write(connection, driver, handshake, wakes, ended) }
            group.addTask {
                guard let request = await controlEnding.wait() else { return }
                ended.fire(.control(request))
            }
            let first = await ended.wait()
            // End the connection before waiting for the tasks: a task may wait on the socket in a way cancelling it does
            // not end (URLSessionWebSocketTask's receive ignores Swift cancellation), and a close frame goes out while
            // the writer side still works.
            switch first {
            case .control(.abort)?:
                connection.abort()
            case .control(.close(_, let code, let reason))?:
                await connection.close(code: code, reason: reason)
            case nil:
                // The scope was cancelled (disconnect, a planned switch, shutdown, sign-out): close normally.
                await connection.close(code: 1000, reason: "")
            case .reader?, .timer?:
                break  // reading has ended, or the timer aborted the connection
            }
            group.cancelAll()
        }
        registry?.remove(id: id)
        wakeContinuation.finish()
        let end: LinkEnd
        switch ended.value {
        case .reader(let reason)?, .timer(let reason)?, .control(.abort(let reason))?, .control(.close(let reason, _, _))?:
            end = reason
        case nil:
            end = .requested  // the transport cancelled the scope (disconnect): the seam closes with 1000
        }
        let (acknowledged, lastActivity, heardAnything) = machine.withLock { machine in
            machine.end()
            return (machine.wasAcknowledged, machine.lastActivity, machine.heardAnything)
        }
        let wall = heardAnything ? wallClock.now().addingTimeInterval(-lastActivity.duration(to: clock.now).timeInterval) : nil
        logger.debug("link ended", metadata: ["link": "\(id)", "end": "\(end)"])
        return LinkReport(end: end, acknowledged: acknowledged, lastReceived: wall)
    }

    /// The reader: a read's frames at a time, each handled where it is read. The events they carry are queued with
    /// the reader's ``DeliveryBatch``, which it flushes after each read: each consumer is woken once per read.
    private func read(
        _ connection: any WebSocketConnection, _ driver: any LinkDriver, _ machine: Locked<LinkStateMachine<C.Instant>>,
        _ control: LinkControl, _ registry: LinkRegistry?, _ timerPoke: Locked<OneShotSignal<Void>>, _ postpone: Postponer,
        _ ended: OneShotSignal<Ended>
    ) async {
        let batch = DeliveryBatch()
        defer { batch.close() }
        var open = false
        while true {
            let messages: [WebSocketMessage]?
            do {
                messages = try await connection.receiveBatch()
            } catch {
                if Task.isCancelled { return }
                ended.fire(.reader(.protocolViolation("WebSocket: \(error)")))
                return
            }
            guard let messages else {
                if !Task.isCancelled { ended.fire(.reader(.peerClosed)) }
                return
            }
            let now = clock.now
            if machine.withLock({ $0.received(at: now) }) { timerPoke.withLock { $0 }.fire() }
            defer {
                batch.flush()
                postpone(at: now)
            }
            for message in messages {
                if open {
                    switch driver.handleFrame(message, into: batch) {
                    case .handled:
                        continue
                    case .keepAlive:
                        // Once a minute at the service's cadence; it may shorten the watchdog (a learned interval).
                        let wake = machine.withLock { machine in
                            machine.keepAliveReceived(at: now)
                            return machine.needsEarlierWake
                        }
                        if wake { timerPoke.withLock { $0 }.fire() }
                    case .reply(let reply):
                        try? await connection.send(reply)
                    case .close(let end, let code, let reason):
                        control.close(end, code: code, reason: reason)
                        return
                    }
                } else {
                    switch driver.handleHandshakeFrame(message) {
                    case .pending:
                        continue
                    case .reply(let reply):
                        try? await connection.send(reply)
                    case .acknowledged(let liveness):
                        let acknowledged = machine.withLock { $0.acknowledged(at: now, fallback: liveness, rotateAfter: rotateAfter) }
                        guard let pingNow = acknowledged else { continue }
                        open = true
                        // One ping at once, to learn whether the server answers pings (recorded as sent before it goes
                        // out, so a pong cannot overtake it).
                        if pingNow && !connection.sendPing() { machine.withLock { $0.webSocketPingsUnavailable() } }
                        // The ack deadline is gone: the timer starts again on the open link's deadlines (once a link).
                        timerPoke.withLock { $0 }.fire()
                        registry?.add(control)
                        driver.linkOpened(control)
                        control.wake()
                    case .fail(let end, let code, let reason):
                        control.close(end, code: code, reason: reason)
                        return
                    }
                }
            }
        }
    }

    /// The timer: sleeps until the state machine's next deadline, deadline after deadline, in one child task, and
    /// starts that child again only when an event moved the deadline earlier than it sleeps for (a poke). Frames and
    /// pongs poke it only when they answer a ping whose pong deadline lies beyond the next ping; otherwise they only move
    /// deadlines later, which the child finds when it wakes. So an idle link's
    /// timer wakes only for deadlines that exist, and no cancelled sleep is left to fire for nothing.
    private func runTimer(
        _ connection: any WebSocketConnection, _ driver: any LinkDriver, _ machine: Locked<LinkStateMachine<C.Instant>>,
        _ timer: (any LinkTimer)?, _ timerPoke: Locked<OneShotSignal<Void>>, _ ended: OneShotSignal<Ended>
    ) async {
        while !Task.isCancelled {
            let poke = OneShotSignal<Void>()
            timerPoke.withLock { $0 = poke }
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await sleepThroughDeadlines(connection, driver, machine, timer, ended) }
                _ = await poke.wait()  // `nil` once the scope is cancelled
                group.cancelAll()
            }
        }
    }

    /// Sleeps until each deadline in turn and performs what is due; returns when nothing is due (the timer then waits
    /// for a poke), when the link failed, or when cancelled.
    private func sleepThroughDeadlines(
        _ connection: any WebSocketConnection, _ driver: any LinkDriver, _ machine: Locked<LinkStateMachine<C.Instant>>,
        _ timer: (any LinkTimer)?, _ ended: OneShotSignal<Ended>
    ) async {
        while true {
            let deadline = machine.withLock { machine -> C.Instant? in
                let next = machine.nextDeadline
                if let next { machine.timerArm = .sleeping(until: next) } else { machine.timerArm = .idle }
                return next
            }
            guard let deadline else { return }
            do { try await sleep(until: deadline, on: connection.linkExecutor, timer: timer) } catch { return }
            let now = clock.now
            let actions = machine.withLock { machine in
                machine.timerArm = .awake
                return machine.deadlineReached(at: now)
            }
            for action in actions {
                switch action {
                case .sendPing:
                    if !connection.sendPing() { machine.withLock { $0.webSocketPingsUnavailable() } }
                case .sendProtocolPing:
                    if let ping = driver.pingMessage() { try? await connection.send(ping) }
                case .pingsIgnored:
                    logger.info("the server does not answer WebSocket pings on this link; using the protocol's own check")
                case .rotate:
                    driver.rotationDue()
                case .driverTimer(let token):
                    driver.timerFired(token)
                case .fail(let failure):
                    logger.warning("link is dead; aborting it", metadata: ["reason": "\(LinkEnd(failure))"])
                    // Known dead: no closing handshake to wait for. The ending is recorded before the abort cancels
                    // anything, so the report says why.
                    ended.fire(.timer(LinkEnd(failure)))
                    connection.abort()
                    return
                }
            }
        }
    }

    /// Sleeps until `deadline`: on the link's own timer or else the connection's when it offers them and ``clock`` is
    /// real time, else on the clock, a little late allowed.
    private func sleep(until deadline: C.Instant, on executor: (any LinkExecutor)?, timer: (any LinkTimer)?) async throws {
        let delay = clock.now.duration(to: deadline)
        guard let executor, sleepsOnConnectionTimers else {
            try await clock.sleepReleasingOnCancel(until: deadline, tolerance: Self.tolerance(for: delay))
            return
        }
        guard delay > .zero else { return try Task.checkCancellation() }
        if let timer { return try await timer.sleep(for: delay) }
        try await executor.sleep(for: delay)
    }

    /// Moves the link's own timer (if it has one) to the deadline a sign of life postponed, from the thread that
    /// received it: the timer's thread then sleeps through the obsolete deadline.
    private struct Postponer: Sendable {
        let timer: (any LinkTimer)?
        let machine: Locked<LinkStateMachine<C.Instant>>
        let slack: Duration

        func callAsFunction(at now: C.Instant) {
            guard let timer, let next = machine.withLock({ $0.postponedWake(slack: slack) }) else { return }
            timer.reschedule(after: now.duration(to: next))
        }
    }

    /// How late the timer may wake: a tenth of the sleep, at most a second. Liveness deadlines are tens of seconds, so
    /// a second late changes nothing, and it lets the system fold the wake into one it makes anyway.
    static func tolerance(for sleep: Duration) -> Duration {
        min(max(sleep / 10, .zero), .seconds(1))
    }

    /// The writer: the handshake first, then, after every wake, what the driver has pending. The handshake is sent in
    /// the scope, so the ack deadline runs meanwhile: a send that never completes cannot keep the link connecting.
    private func write(
        _ connection: any WebSocketConnection, _ driver: any LinkDriver, _ handshake: [WebSocketMessage], _ wakes: AsyncStream<Void>,
        _ ended: OneShotSignal<Ended>
    ) async {
        for message in handshake {
            do { try await connection.send(message) } catch { break }  // the reader sees the end
        }
        for await _ in wakes {
            for message in await driver.pendingMessages() {
                do { try await connection.send(message) } catch { return }  // the reader sees the end
            }
        }
    }
}

/// Waits until `deadline` on `clock` or until `signal` fires, whichever comes first; `true` when the signal fired.
/// Cancellation returns `true` too (the caller checks `Task.isCancelled`), so nothing acts on a cancelled wait.
package func race<C: Clock>(clock: C, deadline: C.Instant, signal: OneShotSignal<Void>) async -> Bool where C.Duration == Duration {
    if signal.isFired { return true }
    return await withTaskGroup(of: Bool.self) { group in
        group.addTask {
            do { try await clock.sleepReleasingOnCancel(until: deadline) } catch { return true }
            return false
        }
        group.addTask {
            _ = await signal.wait()
            return true
        }
        let first = await group.next() ?? true
        group.cancelAll()
        return first
    }
}
