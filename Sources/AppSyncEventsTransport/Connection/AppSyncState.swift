import AppSyncEventsWire
import Foundation
import Logging
import SubscriberCore

/// Everything an ``AppSyncEventsTransport`` knows about its subscriptions, links, rotation and publishes, behind one
/// lock: the transport and its links' reader tasks reach it synchronously, so an event goes from the socket to
/// the consumer's stream without an actor hop. Every method decides under the lock and acts (yields, wakes, closes)
/// after releasing it.
final class AppSyncState: TransportSession {
    struct Values {
        var subscriptions: [String: AppSyncSubscription] = [:]
        /// The id of the last `data` frame routed (only a key: every lookup still goes through `subscriptions`).
        var lastDataID = RecentKey()
        var nextSequence = 0
        var links: [Int: AppSyncLinkRecord] = [:]
        var primary: Int?
        var rotation: AppSyncRotation?
        var publishes: [String: AppSyncPendingPublish] = [:]
    }

    /// The timer token for the end of the post-rotation grace period.
    static let overlapExpiryToken = 1
    /// The timer token for the rotation deadline.
    static let rotationDeadlineToken = 2
    /// The timer token (on a rotation's old link) for the end of its wait for the replies to the publishes it carries.
    static let drainDeadlineToken = 3

    let values = Locked(Values())
    let stopFlag = Locked(false)
    /// Asked for credentials for every batch of subscribes and publishes a link sends.
    let auth: any AuthSession
    /// Whose HTTP host goes into every authorization object.
    let endpoint: AppSyncEndpoint
    let wallClock: WallClock
    let margin: TimeInterval
    let rotationTimeout: Duration
    /// How long a link's writer waits for the credentials of a batch before the link is closed and replaced (the ack
    /// timeout): without it a session that never answers leaves subscribes unsent on a link that says connected.
    let credentialsTimeout: Duration
    /// What the wait for credentials is timed on (the transport's clock).
    let clock: any Clock<Duration>
    let states: ConnectionStateBroadcaster
    let requests: AsyncStream<SupervisorRequest>.Continuation
    let logger: Logger

    init(
        auth: any AuthSession, endpoint: AppSyncEndpoint, wallClock: WallClock, margin: Duration, rotationTimeout: Duration,
        credentialsTimeout: Duration = .seconds(15), clock: any Clock<Duration> = ContinuousClock(),
        states: ConnectionStateBroadcaster,
        requests: AsyncStream<SupervisorRequest>.Continuation, logger: Logger
    ) {
        self.auth = auth
        self.endpoint = endpoint
        self.wallClock = wallClock
        self.margin = margin.timeInterval
        self.rotationTimeout = rotationTimeout
        self.credentialsTimeout = credentialsTimeout
        self.clock = clock
        self.states = states
        self.requests = requests
        self.logger = logger
    }

    var wantsConnection: Bool { values.withLock { !$0.subscriptions.isEmpty || !$0.publishes.isEmpty } }

    // MARK: Subscriptions

    /// Registers a subscription and sends it where it belongs.
    func add(id: String, channel: String, sink: SubscriptionSink) {
        update { values, effects in
            var record = AppSyncSubscription(
                id: id, topic: channel, sequence: values.nextSequence, sink: sink, detail: AppSyncSubscriptionDetail())
            values.nextSequence += 1
            if let primary = values.primary, let control = values.links[primary]?.control {
                record.link = primary
                effects.append(.wake(control))
            }
            if let to = values.rotation?.to, let control = values.links[to]?.control {
                record.detail.rotationTarget = to
                effects.append(.wake(control))
            }
            values.subscriptions[id] = record
            effects.append(.request(.demandChanged))
        }
    }

    /// The consumer stopped: unsubscribe on the wire, and close the connection if nothing else needs it.
    func cancel(_ id: String) {
        update { values, effects in
            guard let record = values.subscriptions.removeValue(forKey: id) else { return }
            for link in [record.link, record.detail.rotationTarget].compactMap({ $0 })
            where values.links[link]?.subscribed.contains(id) == true {
                values.links[link]?.unsubscribeQueue.append(id)
                if let control = values.links[link]?.control { effects.append(.wake(control)) }
            }
            rotationProgress(&values, &effects)
            closeIfIdle(&values, &effects)
        }
    }

    /// Ends every subscription and publish (disconnect or a final failure).
    func endAll(error: RealtimeError?) {
        update { values, effects in
            for record in values.subscriptions.values { effects.append(.finish(record.sink, error)) }
            for publish in values.publishes.values {
                effects.append(.reply(publish.reply, .failure(error ?? .disconnected)))
            }
            values = Values(nextSequence: values.nextSequence)
        }
    }

    func closeIfIdle(_ values: inout Values, _ effects: inout [SessionEffect]) {
        guard values.subscriptions.isEmpty, values.publishes.isEmpty, values.rotation == nil else { return }
        for (_, link) in values.links {
            if let control = link.control { effects.append(.close(control, .requested, "idle")) }
        }
    }

    // MARK: Publishes

    func addPublish(id: String, channel: String, events: [String], reply: OneShotSignal<Result<PublishResult, RealtimeError>>) {
        update { values, effects in
            values.publishes[id] = AppSyncPendingPublish(channel: channel, events: events, sequence: values.nextSequence, reply: reply)
            values.nextSequence += 1
            if let primary = values.primary, let control = values.links[primary]?.control { effects.append(.wake(control)) }
            effects.append(.request(.demandChanged))
        }
    }

    func completePublish(_ id: String, _ result: Result<PublishResult, RealtimeError>) {
        update { values, effects in
            guard let publish = values.publishes.removeValue(forKey: id) else { return }
            effects.append(.reply(publish.reply, result))
            closeRetiredLinks(&values, &effects)
            closeIfIdle(&values, &effects)
        }
    }

    // MARK: Links

    func linkCreated(_ id: Int) {
        values.withLock { values in
            // The supervisor opens a primary only once the last one is lost, which ends any rotation: a link made while
            // a rotation waits for its successor is that successor.
            values.links[id] = AppSyncLinkRecord(successor: values.rotation.map { $0.to == nil } ?? false)
        }
    }

    /// A link was acknowledged: the first (or a reconnect) becomes primary; during a rotation it is the target.
    func linkOpened(_ id: Int, control: LinkControl) {
        update { values, effects in
            values.links[id]?.control = control
            let successor = values.links[id]?.successor == true
            if successor, let rotation = values.rotation, rotation.to == nil, values.primary == rotation.from, values.primary != nil {
                values.rotation?.to = id
                effects.append(.schedule(control, rotationTimeout, Self.rotationDeadlineToken))
                for key in values.subscriptions.keys {
                    values.subscriptions[key]?.detail.clearRotation()
                    values.subscriptions[key]?.detail.rotationTarget = id
                }
                rotationProgress(&values, &effects)
            } else if !successor, values.primary == nil {
                values.primary = id
                // Each is confirmed again on the new link. None should still be live (losing the primary interrupted
                // them all); one that is reports a gap then, rather than nothing.
                let lostAt = wallClock.now().addingTimeInterval(-margin)
                for key in values.subscriptions.keys {
                    values.subscriptions[key]?.link = id
                    values.subscriptions[key]?.interrupt(at: lostAt)
                }
                states.update(.connected)
            } else {
                // A successor whose rotation was given up: its old link was lost, so the supervisor reconnects with a
                // primary of its own (made primary here, this one would have that turned away, and the state would
                // stay at the supervisor's `connecting`). Or a stray link while another is primary.
                effects.append(.close(control, .requested, "rotation abandoned"))
                // The supervisor reports nothing for a link it is told was replaced: the state is the primary's.
                if values.primary != nil { states.update(.connected) }
            }
            // Everything may have been cancelled while it connected: nothing would close it later.
            closeIfIdle(&values, &effects)
            effects.append(.wake(control))
        }
    }

    /// The primary link reached its rotation lead: open a replacement.
    func rotationDue(from id: Int) {
        update { values, effects in
            guard values.primary == id, values.rotation == nil, !values.subscriptions.isEmpty else { return }
            logger.info("rotating the connection before its maximum duration")
            values.rotation = AppSyncRotation(from: id, began: wallClock.now())
            effects.append(.request(.rotate))
        }
    }

    /// A link ended: what it means for the connection, and the gap for its subscriptions.
    func linkEnded(_ id: Int, report: LinkReport) -> LinkLoss {
        update { values, effects in
            let record = values.links.removeValue(forKey: id)
            failPublishes(sentOn: id, report: report, &values, &effects)
            for (publishID, publish) in values.publishes where publish.claimedBy == id { values.publishes[publishID]?.claimedBy = nil }
            // A link never created is a successor whose credentials never came.
            let successor = record?.successor ?? true
            if let rotation = values.rotation, rotation.from != id, rotation.to == id || (rotation.to == nil && successor) {
                // The replacement failed: keep the old connection (the service ends it at its maximum duration).
                logger.warning("rotation could not open a new connection; keeping the old one", metadata: ["reason": "\(report.end)"])
                abortRotation(&values, &effects)
                return .replaced
            }
            if record?.successor == true || record?.retired == true {
                // A successor given up, or a rotation's old link after its cut-over: it carries nothing, so its end
                // loses nothing (even with no primary now: that one's end reported the loss).
                return .replaced
            }
            if values.rotation?.from == id {
                if salvageRotation(after: report, &values, &effects) { return .replaced }
                abortRotation(&values, &effects)
            }
            if let primary = values.primary, primary != id {
                // A stray link while another is primary. The supervisor reports nothing for it: the state is the
                // primary's.
                states.update(.connected)
                return .replaced
            }
            if values.primary == id { values.primary = nil }
            let lostAt = report.lossStart(margin: margin, now: wallClock.now())
            for key in values.subscriptions.keys {
                guard var subscription = values.subscriptions[key] else { continue }
                subscription.interrupt(at: lostAt)
                subscription.link = nil
                subscription.detail.clearRotation()
                subscription.detail.overlapLog = []
                values.subscriptions[key] = subscription
            }
            return .lost(reconnectEnding(report))
        }
    }

    private func reconnectEnding(_ report: LinkReport) -> ReconnectBookkeeping.Ending {
        switch report.end {
        case .requested: .requested
        case .authRejected(let detail): .authRejected(detail)
        case .openFailed(let detail, authRejected: true): .authRejected(detail)
        // AppSync defines no fatal close codes: the service closes with 1000 even on failure.
        default: .retryable
        }
    }

    private func failPublishes(sentOn id: Int, report: LinkReport, _ values: inout Values, _ effects: inout [SessionEffect]) {
        let error = report.end == .rotated ? Self.unansweredOnRotatedLink : report.end.error(close: report.close)
        for (publishID, publish) in values.publishes where publish.sentOn == id {
            values.publishes[publishID] = nil
            effects.append(.reply(publish.reply, .failure(error)))
        }
    }

    // MARK: Frames (the link's reader calls these)

    /// A `data` frame: the hot path. Returns the sink to deliver `payload` to directly, or `nil` when the state
    /// handled it (buffered for a rotation, a duplicate, or an unknown id).
    func routeData(_ payload: RealtimePayload, id: String, on link: Int) -> SubscriptionSink? {
        values.withLock { values in Self.route(payload, to: id, on: link, in: &values) }
    }

    /// ``routeData(_:id:on:)`` with the id as the frame's bytes (without escapes).
    func routeData(_ payload: RealtimePayload, idBytes: UnsafeBufferPointer<UInt8>, on link: Int) -> SubscriptionSink? {
        values.withLock { values in Self.route(payload, to: values.lastDataID.string(for: idBytes), on: link, in: &values) }
    }

    /// The record is read where it is stored, not copied out (a copy retains and releases all it holds, per event).
    private static func route(_ payload: RealtimePayload, to id: String, on link: Int, in values: inout Values) -> SubscriptionSink? {
        let sink = values.subscriptions.withStoredValue(forKey: id) { record -> SubscriptionSink? in
            if record.link == link {
                if record.detail.rotationTarget != nil {
                    record.detail.overlapLog.append(payload.json)
                    if record.detail.rotationLive { record.detail.oldDeliveredSinceConfirmation = true }
                } else if !record.detail.overlapLog.isEmpty, record.detail.consumeOverlap(payload.json) {
                    return nil
                }
                return record.sink
            }
            if record.detail.rotationTarget == link {
                record.detail.rotationBuffer.append(payload)
            }
            return nil
        }
        return sink ?? nil
    }

    /// An event of subscription `id` could not be read (on the link that delivers it or, reported at once, on its
    /// rotation's successor, whose buffer it would have joined).
    func undecodable(id: String, on link: Int) {
        let sink = values.withLock { values in
            values.subscriptions[id].flatMap { $0.link == link || $0.detail.rotationTarget == link ? $0.sink : nil }
        }
        sink?.reportLoss(count: 1, reason: .undecodable)
    }

    /// `broadcast_error`: the server could not deliver to this subscription (on the link that delivers it or its
    /// rotation's successor).
    func broadcastError(id: String?, on link: Int) {
        let sinks = values.withLock { values in
            values.subscriptions.values.filter { ($0.id == id || id == nil) && ($0.link == link || $0.detail.rotationTarget == link) }
                .map(\.sink)
        }
        for sink in sinks { sink.reportLoss(count: 1, reason: .serverError) }
    }

    func subscriptionConfirmed(_ id: String, on link: Int) {
        update { values, effects in
            guard var record = values.subscriptions[id] else { return }
            if record.detail.rotationTarget == link {
                record.detail.rotationConfirmedAt = wallClock.now()
                (record.detail.authRefusals, record.detail.credentialsThrows) = (0, 0)
                values.subscriptions[id] = record
                rotationProgress(&values, &effects)
                return
            }
            guard record.link == link, !record.isLive else { return }
            (record.detail.authRefusals, record.detail.credentialsThrows) = (0, 0)
            if let event = record.confirm(now: wallClock.now()) { effects.append(event) }
            values.subscriptions[id] = record
        }
    }

    /// The server refused subscription `id` on `link` (`subscribe_error`, or `error` before it was live). Refused as
    /// unauthorized for the first time since it was last live, it is sent again on that link with refreshed
    /// credentials; otherwise only this subscription fails (the link and its siblings carry on).
    func subscriptionRejected(_ id: String, _ error: AppSyncServerError, on link: Int) {
        update { values, effects in
            // A late refusal from a link that no longer carries it (a rotation's old link) says nothing about it.
            guard var record = values.subscriptions[id], record.link == link || record.detail.rotationTarget == link else { return }
            if retries(error, refusals: &record.detail.authRefusals, "subscription", channel: record.channel) {
                // Revoked while live there: the server stopped delivering it, so its next confirmation reports the gap.
                if record.link == link { record.interrupt(at: wallClock.now().addingTimeInterval(-margin)) }
                values.subscriptions[id] = record
                // The server holds nothing for this id: the next batch subscribes it again (same id), forcing a refresh.
                values.links[link]?.subscribed.remove(id)
                if let control = values.links[link]?.control { effects.append(.wake(control)) }
                return
            }
            values.subscriptions[id] = nil
            let failure = error.isAuthFailure ? error.refusedAfterRefresh(.subscribe, channel: record.channel) : error.subscriptionError
            logger.warning("subscription rejected", metadata: ["channel": "\(record.channel)", "error": "\(failure)"])
            effects.append(.finish(record.sink, failure))
            rotationProgress(&values, &effects)
            closeIfIdle(&values, &effects)
        }
    }

    /// The server refused publish `id` as a whole (`publish_error`, or `error` for a publish). Refused as unauthorized
    /// for the first time, it is sent again with refreshed credentials; otherwise it fails.
    func publishRejected(_ id: String, _ error: AppSyncServerError) {
        update { values, effects in
            guard var publish = values.publishes[id] else { return }
            if retries(error, refusals: &publish.authRefusals, "publish", channel: publish.channel) {
                publish.sentOn = nil
                values.publishes[id] = publish
                if let primary = values.primary, let control = values.links[primary]?.control { effects.append(.wake(control)) }
                closeRetiredLinks(&values, &effects)
                return
            }
            values.publishes[id] = nil
            closeRetiredLinks(&values, &effects)
            let failure =
                error.isAuthFailure
                ? error.refusedAfterRefresh(.publish, channel: publish.channel)
                : RealtimeError.publishRejected(errorType: error.errorType, message: error.message)
            effects.append(.reply(publish.reply, .failure(failure)))
            closeIfIdle(&values, &effects)
        }
    }

    /// Whether a refusal is retried: only the first refusal as unauthorized (counted in `refusals`), with refreshed
    /// credentials.
    private func retries(_ error: AppSyncServerError, refusals: inout Int, _ operation: String, channel: String) -> Bool {
        guard error.isAuthFailure && refusals == 0 else { return false }
        logger.info(
            "\(operation) refused as unauthorized; retrying once with refreshed credentials",
            metadata: ["channel": "\(channel)", "errorType": "\(error.errorType)"])
        refusals += 1
        return true
    }

    /// Whether `id` names a subscription not yet live on `link`, where it delivers or is moving to in a rotation (so a
    /// generic `error` for it there is a rejection).
    func isPendingSubscription(_ id: String, on link: Int) -> Bool {
        values.withLock { values in
            values.subscriptions[id].map { $0.detail.rotationTarget == link ? !$0.detail.rotationLive : $0.link == link && !$0.isLive }
                ?? false
        }
    }

    func isPublish(_ id: String) -> Bool { values.withLock { $0.publishes[id] != nil } }

    func unsubscribed(_ id: String, on link: Int) {
        update { values, effects in
            guard values.rotation?.from == link, values.rotation?.awaitingUnsubscribe != nil else { return }
            values.rotation?.awaitingUnsubscribe?.remove(id)
            if values.rotation?.awaitingUnsubscribe?.isEmpty == true { finalizeRotation(&values, &effects) }
        }
    }

    func timerFired(_ token: Int, on link: Int) {
        update { values, effects in
            switch token {
            case Self.overlapExpiryToken:
                for key in values.subscriptions.keys { values.subscriptions[key]?.detail.overlapLog = [] }
            case Self.rotationDeadlineToken:
                guard let rotation = values.rotation, rotation.to == link else { return }
                logger.warning("rotation did not complete in time; cutting over anyway")
                // Live on the old link and still unanswered here after the whole timeout: subscribed again at the
                // cut-over, or an answer that never comes would leave it dark.
                for (key, record) in values.subscriptions where record.isLive && !record.detail.rotationLive {
                    values.links[link]?.subscribed.remove(key)
                }
                // The old link may have gone silent (half-open) since the rotation began: nothing says it delivered later.
                finalizeRotation(oldLastFrame: rotation.began, &values, &effects)
            case Self.drainDeadlineToken:
                endDrain(of: link, &values, &effects)
            default:
                break
            }
        }
    }
}
