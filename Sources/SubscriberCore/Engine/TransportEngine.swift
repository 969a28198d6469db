import Foundation
import Logging

/// The state of one run of a transport: its subscriptions and links, behind its own lock (`AppSyncState`,
/// `GraphQLState`). The protocol's part; ``TransportEngine`` owns its life.
///
/// Every decision is made under the lock and collected as ``SessionEffect``s, performed once the lock is released
/// (``update(_:)``): a consumer's stream or a link is never called with the lock held.
package protocol TransportSession: AnyObject, Sendable {
    associatedtype Values
    /// Everything the session knows, behind its one lock.
    var values: Locked<Values> { get }
    /// Set once the transport stopped for good.
    var stopFlag: Locked<Bool> { get }
    /// Asks the run's supervisor for things (a connection, a rotation).
    var requests: AsyncStream<SupervisorRequest>.Continuation { get }
    /// The transport's connection states.
    var states: ConnectionStateBroadcaster { get }
    /// Whether anything (a subscription, a publish) needs a connection now.
    var wantsConnection: Bool { get }
    /// Ends every subscription stream: normally (`nil`) or with `error`.
    func endAll(error: RealtimeError?)
    /// The consumer of subscription `id` stopped: unsubscribe on the wire, and close the connection if nothing else
    /// needs it.
    func cancel(_ id: String)
    /// A link ended: the session updates its subscriptions (gaps start at the report's last frame) and says whether
    /// the connection is lost.
    func linkEnded(_ id: Int, report: LinkReport) -> LinkLoss
}

extension TransportSession {
    /// Whether the transport stopped for good (signed out, session expired, the policy gave up): the next use starts a
    /// new run.
    package var stopped: Bool { stopFlag.withLock { $0 } }

    /// Stops for good: every stream ends with `error`; the next use starts a new run.
    package func stop(error: RealtimeError) {
        stopFlag.withLock { $0 = true }
        endAll(error: error)
    }

    /// Runs `body` under the lock, then performs the effects it collected.
    package func update<R>(_ body: (inout Values, inout [SessionEffect]) -> R) -> R {
        var effects: [SessionEffect] = []
        let result = values.withLock { body(&$0, &effects) }
        perform(effects)
        return result
    }

    /// Performs effects decided under the lock (call it with the lock released).
    package func perform(_ effects: [SessionEffect]) {
        for effect in effects {
            switch effect {
            case .yield(let sink, let event): sink.yield(event)
            case .finish(let sink, let error): sink.finish(throwing: error)
            case .wake(let control): control.wake()
            case .close(let control, let end, let reason): control.close(end, reason: reason)
            case .schedule(let control, let delay, let token): control.schedule(after: delay, token: token)
            case .request(let request): requests.yield(request)
            case .reply(let signal, let result): signal.fire(result)
            }
        }
    }
}

/// What both transports share around their protocol, written once: one run at a time (a ``TransportSession`` and the
/// supervisor task that owns its links), started on first use and again after a stop or a disconnect; `disconnect()`,
/// `verifyConnection()` and the connection-state broadcast; and the end of a transport dropped without a disconnect.
/// A transport keeps only its protocol: the session (messages, subscribe, ack and error rules) and its
/// ``SupervisedTransport``.
///
/// Its state is one lock; the transports built on it are plain `Sendable` classes, with no isolation of their own.
package final class TransportEngine<Session: TransportSession>: Sendable {
    private struct Run: Sendable {
        let session: Session
        let requests: AsyncStream<SupervisorRequest>.Continuation
        let task: Task<Void, Never>
    }

    /// The transport's connection states.
    package let states = ConnectionStateBroadcaster()
    private let outage = Locked(ConnectionOutage())
    private let current = Locked<Run?>(nil)
    private let startSupervisor: @Sendable (any SupervisedTransport, AsyncStream<SupervisorRequest>) -> Task<Void, Never>

    /// Creates an engine whose runs are supervised per `settings`; `rotateAfter` (AppSync) asks for a successor link
    /// that long after each acknowledgement.
    package init(
        clock: any Clock<Duration>, settings: LinkSettings, rotateAfter: Duration? = nil, auth: any AuthSession,
        connector: any WebSocketConnector, pathMonitor: (any NetworkPathMonitor)?, wallClock: WallClock, logger: Logger
    ) {
        let (states, outage) = (states, outage)
        func start<C: Clock>(on clock: C) -> @Sendable (any SupervisedTransport, AsyncStream<SupervisorRequest>) -> Task<Void, Never>
        where C.Duration == Duration {
            let runner = LinkRunner(
                clock: clock, wallClock: wallClock, logger: logger, ackTimeout: settings.ackTimeout, rotateAfter: rotateAfter,
                liveness: settings.liveness)
            let supervisor = LinkSupervisor(
                decisions: SupervisorStateMachine(policy: settings.reconnectPolicy), auth: auth, connector: connector,
                runner: runner, states: states, logger: logger, pathMonitor: pathMonitor, outage: outage)
            return { transport, requests in Task { await supervisor.run(transport, requests: requests) } }
        }
        // The production clock gets code specialised for it: an existential clock opens to a type known only at run
        // time, and the per-frame path would pay generic metadata lookups for it.
        startSupervisor = (clock as? ContinuousClock).map { start(on: $0) } ?? start(on: clock)
    }

    /// The current session, or a new one when there is none or it stopped: `make` builds it from the run's request
    /// stream (for the session to ask its supervisor for things) and the supervisor starts.
    package func running(
        _ make: (AsyncStream<SupervisorRequest>.Continuation) -> (Session, any SupervisedTransport)
    ) -> Session {
        current.withLock { run in
            if let run, !run.task.isCancelled, !run.session.stopped { return run.session }
            // A stopped run's supervisor has returned, or (a stop from outside it) returns now: none outlives its run.
            run?.task.cancel()
            let (requests, continuation) = AsyncStream<SupervisorRequest>.makeStream(bufferingPolicy: .unbounded)
            let (session, supervised) = make(continuation)
            run = Run(session: session, requests: continuation, task: startSupervisor(supervised, requests))
            return session
        }
    }

    /// `body` with the current session (``running(_:)``) as one step with respect to a stop: a session stopped after
    /// `body` ends what it added; one stopped before (after `running` found it alive) is passed over, and `body` runs
    /// with a new run's session. Otherwise what it added would wait in a session whose streams had already ended.
    package func withRunning<R>(
        _ make: (AsyncStream<SupervisorRequest>.Continuation) -> (Session, any SupervisedTransport), _ body: (Session) -> R
    ) -> R {
        while true {
            let session = running(make)
            // Under the stop flag's lock, so a stop waits for `body`, then ends what it added.
            let result: R? = session.stopFlag.withLock { stopped in stopped ? nil : body(session) }
            if let result { return result }
        }
    }

    /// A subscription's reader and the sink its session delivers to, per `settings`; the consumer's going away cancels
    /// `id` in `session`.
    package func openSubscription(
        _ id: String, in session: Session, label: String, settings: LinkSettings, wallClock: WallClock, logger: Logger
    ) -> (reader: BatchReader<SubscriptionEvent>, sink: SubscriptionSink) {
        let (reader, sink) = SubscriptionSink.make(
            bufferLimit: settings.subscriptionBufferLimit, label: label, logger: logger, wallClock: wallClock,
            margin: settings.gapSafetyMargin)
        sink.onConsumerGone { [weak session] in session?.cancel(id) }
        return (reader, sink)
    }

    /// Why the latest connection was lost or could not be made since the transport was last connected; `nil` while
    /// connected or before any failure (``RealtimeTransport/lastConnectionFailure``).
    package var lastConnectionFailure: String? { states.current == .connected ? nil : outage.withLock { $0.lastFailure } }

    /// When the latest acknowledged connection was lost; `nil` while connected or before any was lost
    /// (``RealtimeTransport/connectionLostAt``).
    package var connectionLostAt: Date? { states.current == .connected ? nil : outage.withLock { $0.lostAt } }

    /// The current session, if a run is under way.
    package var session: Session? { current.withLock { $0?.session } }

    /// Ends every stream normally, closes every connection and stops reconnecting; returns once every link is gone. A
    /// later use starts afresh.
    package func disconnect() async {
        let run = current.withLock { run in
            defer { run = nil }
            return run
        }
        if let run {
            run.session.endAll(error: nil)
            run.task.cancel()
            await run.task.value
        }
        // A run started while this one ended (a subscribe meanwhile) owns the state now: it is not overwritten.
        current.withLock { run in
            guard run == nil else { return }
            outage.withLock { $0 = ConnectionOutage() }
            states.update(.disconnected(.requested))
        }
    }

    /// Asks the supervisor to probe every open link now (and to reconnect at once if it waits to).
    package func verifyConnection() {
        current.withLock { $0 }?.requests.yield(.verifyConnection)
    }

    /// A transport dropped without `disconnect()` ends the same way, without waiting: its streams finish and its
    /// supervisor is cancelled, so no connection outlives it; its state streams report `disconnected(requested)` and
    /// finish.
    deinit {
        if let run = current.withLock({ $0 }) {
            run.session.endAll(error: nil)
            run.task.cancel()
        }
        states.update(.disconnected(.requested))
        states.finish()
    }
}
