import Foundation
import Logging
import SubscriberCore

/// Everything a ``GraphQLTransport`` knows about its subscriptions and its link, behind one lock, so the link's reader
/// delivers `next` payloads without an actor hop. Decisions are made under the lock; yields and wakes after it.
final class GraphQLState: TransportSession {
    /// One subscription: its operation, and `link` set when `subscribe` is sent there. It is live on its first `next`,
    /// or once the confirmation window passed without an `error`. GraphQL keeps nothing of its own about it.
    typealias Subscription = TransportSubscription<GraphQLOperation, Void>

    struct Values {
        var subscriptions: [String: Subscription] = [:]
        var nextSequence = 0
        var linkID: Int?
        var control: LinkControl?
        var completeQueue: [String] = []
        /// The id of the last `next` delivered (only a key: every lookup still goes through `subscriptions`).
        var lastNextID = RecentKey()
    }

    /// The timer token for the idle close; confirmation timers use the subscription's sequence number (≥ 0).
    static let idleToken = -1

    let values = Locked(Values())
    let stopFlag = Locked(false)
    /// Asked whether the user is still signed in before every batch of subscribes.
    let auth: any AuthSession
    /// What that question is timed on (the transport's clock).
    let clock: any Clock<Duration>
    let configuration: GraphQLTransportConfiguration
    let wallClock: WallClock
    let margin: TimeInterval
    let states: ConnectionStateBroadcaster
    let requests: AsyncStream<SupervisorRequest>.Continuation
    let logger: Logger

    init(
        configuration: GraphQLTransportConfiguration, auth: any AuthSession, clock: any Clock<Duration>, wallClock: WallClock,
        states: ConnectionStateBroadcaster, requests: AsyncStream<SupervisorRequest>.Continuation, logger: Logger
    ) {
        self.auth = auth
        self.clock = clock
        self.configuration = configuration
        self.wallClock = wallClock
        self.margin = configuration.link.gapSafetyMargin.timeInterval
        self.states = states
        self.requests = requests
        self.logger = logger
    }

    var wantsConnection: Bool { values.withLock { !$0.subscriptions.isEmpty } }

    // MARK: Subscriptions

    func add(id: String, operation: GraphQLOperation, sink: SubscriptionSink) {
        update { values, effects in
            values.subscriptions[id] = Subscription(id: id, topic: operation, sequence: values.nextSequence, sink: sink, detail: ())
            values.nextSequence += 1
            if let control = values.control { effects.append(.wake(control)) }
            effects.append(.request(.demandChanged))
        }
    }

    func cancel(_ id: String) {
        update { values, effects in
            guard let record = values.subscriptions.removeValue(forKey: id) else { return }
            if let link = record.link, link == values.linkID, let control = values.control {
                values.completeQueue.append(id)
                effects.append(.wake(control))
            }
            scheduleIdleClose(&values, &effects)
            // While connecting or waiting to reconnect there is no link to close yet: the supervisor hears of it.
            effects.append(.request(.demandChanged))
        }
    }

    private func scheduleIdleClose(_ values: inout Values, _ effects: inout [SessionEffect]) {
        guard values.subscriptions.isEmpty, let control = values.control else { return }
        if configuration.idleCloseDelay > .zero {
            effects.append(.schedule(control, configuration.idleCloseDelay, Self.idleToken))
        } else {
            effects.append(.close(control, .requested, "idle"))
        }
    }

    func endAll(error: RealtimeError?) {
        update { values, effects in
            for record in values.subscriptions.values { effects.append(.finish(record.sink, error)) }
            values.subscriptions = [:]
        }
    }

    // MARK: The link

    func linkOpened(_ id: Int, control: LinkControl) {
        update { values, effects in
            values.linkID = id
            values.control = control
            values.completeQueue = []
            states.update(.connected)
            effects.append(.wake(control))
            // Everything may have been cancelled while the link was connecting.
            scheduleIdleClose(&values, &effects)
        }
    }

    /// `complete` for what ended, and `subscribe` for everything not yet sent on the link (same ids after a reconnect)
    /// once the session says, once per batch, that the user is still signed in: the link carries the credentials of
    /// whoever connected it, so after a sign-out the batch fails with `signedOut` instead.
    func pendingMessages(on id: Int) async -> [WebSocketMessage] {
        let batch = values.withLock { values in
            values.linkID != id ? [] : values.subscriptions.values.filter { $0.link != id }.sorted { $0.sequence < $1.sequence }.map(\.id)
        }
        var signedIn = true
        if !batch.isEmpty {
            let (auth, clock, timeout): (any AuthSession, any Clock<Duration>, Duration) = (auth, clock, configuration.link.ackTimeout)
            let answer: Bool? = await withDeadline(timeout, on: clock, mode: .abandonOperation) { await auth.isSignedIn() }
            guard let answer else {
                // As without credentials at connect: the link is replaced (its successor asks again).
                values.withLock { $0.linkID == id ? $0.control : nil }?.close(.credentialsTimeout(timeout), reason: "no answer")
                return []
            }
            signedIn = answer
        }
        var messages: [WebSocketMessage] = []
        update { values, effects in
            guard values.linkID == id, let control = values.control else { return }
            for complete in values.completeQueue { messages.append(.text(GraphQLOutboundMessage.complete(id: complete))) }
            values.completeQueue = []
            for subscriptionID in batch {
                guard let record = values.subscriptions[subscriptionID] else { continue }
                guard signedIn else {
                    values.subscriptions[subscriptionID] = nil
                    effects.append(.finish(record.sink, .signedOut))
                    continue
                }
                values.subscriptions[subscriptionID]?.link = id
                messages.append(.text(GraphQLOutboundMessage.subscribe(id: record.id, operation: record.topic)))
                effects.append(.schedule(control, configuration.liveConfirmationWindow, record.sequence))
            }
            if !signedIn {
                logger.warning("signed out: new subscriptions fail", metadata: ["count": "\(batch.count)"])
                scheduleIdleClose(&values, &effects)
            }
        }
        return messages
    }

    /// ``deliver(_:to:on:)`` with the id as the frame's bytes (without escapes).
    func deliver(_ payload: RealtimePayload, toID idBytes: UnsafeBufferPointer<UInt8>, on link: Int, into batch: DeliveryBatch) {
        let (id, sink) = values.withLock { values -> (String, SubscriptionSink?) in
            let id = values.lastNextID.string(for: idBytes)
            let sink = values.subscriptions.withStoredValue(forKey: id) { record in
                record.link == link && record.isLive ? record.sink : nil
            }
            return (id, sink ?? nil)
        }
        if let sink {
            sink.yield(.payload(payload), into: batch)
            return
        }
        deliver(payload, to: id, on: link, into: batch)
    }

    /// The hot path: a `next` payload for `id`. Confirms the subscription first if this is its first event.
    func deliver(_ payload: RealtimePayload, to id: String, on link: Int, into batch: DeliveryBatch) {
        let sink = values.withLock { values -> SubscriptionSink? in
            guard let record = values.subscriptions[id], record.link == link else { return nil }
            return record.isLive ? record.sink : nil
        }
        if let sink {
            sink.yield(.payload(payload), into: batch)
            return
        }
        confirm(id, on: link)
        values.withLock { values in values.subscriptions[id].flatMap { $0.link == link ? $0.sink : nil } }?.yield(
            .payload(payload), into: batch)
    }

    /// The subscription is live on `link`: report `live` the first time, `resumed(gap:)` after an interruption.
    ///
    /// The event is queued under the lock, only the consumer's wake-up after it: a `next` read on another thread that
    /// finds the subscription live cannot queue its payload ahead of the confirmation.
    func confirm(_ id: String, on link: Int) {
        let batch = DeliveryBatch()
        values.withLock { values in
            guard var record = values.subscriptions[id], record.link == link else { return }
            if case .yield(let sink, let event) = record.confirm(now: wallClock.now()) { sink.yield(event, into: batch) }
            values.subscriptions[id] = record
        }
        batch.flush()
    }

    func timerFired(_ token: Int, on link: Int) {
        if token == Self.idleToken {
            update { values, effects in
                guard values.subscriptions.isEmpty, values.linkID == link, let control = values.control else { return }
                effects.append(.close(control, .requested, "idle"))
            }
            return
        }
        let id = values.withLock { values in values.subscriptions.values.first { $0.sequence == token }?.id }
        if let id { confirm(id, on: link) }
    }

    /// The server ended the operation: with `error` (`errors` set) or `complete`.
    func ended(_ id: String, errorsJSON: String?) {
        update { values, effects in
            guard let record = values.subscriptions.removeValue(forKey: id) else { return }
            if let errorsJSON {
                logger.warning("subscription ended with errors", metadata: ["id": "\(id)"])
                effects.append(.finish(record.sink, RealtimeError.graphQLErrors(errorsJSON)))
            } else {
                effects.append(.finish(record.sink, nil))
            }
            scheduleIdleClose(&values, &effects)
        }
    }

    /// The link ended: every subscription stops being live; the gap starts at the link's last frame.
    func linkEnded(_ id: Int, report: LinkReport) -> LinkLoss {
        update { values, _ in
            if values.linkID == id {
                values.linkID = nil
                values.control = nil
                values.completeQueue = []
            }
            let lostAt = report.lossStart(margin: margin, now: wallClock.now())
            for key in values.subscriptions.keys {
                values.subscriptions[key]?.interrupt(at: lostAt)
                values.subscriptions[key]?.link = nil
            }
            return .lost(reconnectEnding(report, hasSubscriptions: !values.subscriptions.isEmpty))
        }
    }

    private func reconnectEnding(_ report: LinkReport, hasSubscriptions: Bool) -> ReconnectBookkeeping.Ending {
        switch report.end {
        case .requested, .rotated: .requested
        case .peerClosed:
            GraphQLCloseCode.ending(for: report.close ?? WebSocketCloseInfo(code: nil), hasSubscriptions: hasSubscriptions)
        case .openFailed(let detail, authRejected: true), .authRejected(let detail): .authRejected(detail)
        case .openFailed, .ackTimeout, .keepAliveTimeout, .pongTimeout, .protocolViolation, .serverError, .credentialsTimeout:
            .retryable
        }
    }
}
