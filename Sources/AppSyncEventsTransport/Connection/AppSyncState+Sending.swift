import Foundation
import Logging
import SubscriberCore

/// What a link sends, authorized when it is sent. A connection lives up to 24 hours and a token perhaps one, so every
/// batch of subscribes and publishes asks the ``AuthSession`` for credentials at that moment (the session caches):
/// 1. under the lock, take what the link must send (the batch), marking its publishes as claimed;
/// 2. without the lock, ask for credentials once for the whole batch (`forceRefresh` when it holds a retry after an
///    unauthorized refusal);
/// 3. under the lock again, keep what is still wanted (a subscription may have been cancelled, the link may be
///    ending, a rotation may have moved it), mark it sent, and sign each message outside the lock (IAM signs each
///    body).
///
/// The link's writer is the only caller for its link, so nothing is claimed twice. Unsubscribes need no credentials
/// and go out with the batch. `data` frames never pass here.
extension AppSyncState {
    /// One batch of a link's outgoing messages, between taking it and signing it.
    struct SendBatch {
        var subscribes: [String] = []
        var unsubscribes: [String] = []
        var publishes: [String] = []
        /// A retry after an unauthorized refusal is among them.
        var forceRefresh = false

        var needsCredentials: Bool { !subscribes.isEmpty || !publishes.isEmpty }
    }

    /// What was decided under the lock, to be built (and signed) outside it.
    private struct SendPlan {
        var subscribes: [(id: String, channel: String)] = []
        var unsubscribes: [String] = []
        var publishes: [(id: String, channel: String, events: [String])] = []
    }

    /// What link `id` must send now, every subscribe and publish authorized with credentials asked for now.
    func pendingMessages(on id: Int) async -> [WebSocketMessage] {
        let batch = takeBatch(on: id)
        guard batch.needsCredentials else { return batch.unsubscribes.map { .text(AppSyncOutboundMessage.unsubscribe(id: $0)) } }
        guard let fetched = await credentials(for: batch) else {
            // The link is closed and replaced (through the supervisor's own bounded wait); its successor sends the batch.
            logger.warning("no credentials for what the link must send; replacing the link", metadata: ["link": "\(id)"])
            let control = values.withLock { $0.links[id]?.control }
            control?.close(.credentialsTimeout(credentialsTimeout), reason: "no credentials")
            return finishBatch(batch, .cancelled, on: id)
        }
        return finishBatch(batch, fetched, on: id)
    }

    /// Step 2: credentials for `batch`; `nil` if the session gives none within ``credentialsTimeout``.
    private func credentials(for batch: SendBatch) async -> SendTimeCredentials? {
        let (auth, forceRefresh, clock): (any AuthSession, Bool, any Clock<Duration>) = (auth, batch.forceRefresh, clock)
        let answer: SendTimeCredentials? = await withDeadline(credentialsTimeout, on: clock, mode: .awaitOperation) {
            await auth.credentialsForSending(forceRefresh: forceRefresh)
        }
        return answer
    }

    /// Step 1: what link `id` must send, in the order it was asked for.
    func takeBatch(on id: Int) -> SendBatch {
        values.withLock { values in
            var batch = SendBatch()
            guard var link = values.links[id], let control = link.control else { return batch }
            // Unsubscribes go out even on a link that is closing (a courtesy to the server); nothing new does.
            batch.unsubscribes = link.unsubscribeQueue
            for unsubscribed in link.unsubscribeQueue { link.subscribed.remove(unsubscribed) }
            link.unsubscribeQueue = []
            values.links[id] = link
            guard !control.isEnding else { return batch }
            for record in values.subscriptions.values.sorted(by: { $0.sequence < $1.sequence })
            where !link.subscribed.contains(record.id) && Self.wants(record, on: id, values) {
                batch.subscribes.append(record.id)
                if record.detail.authRefusals > 0 { batch.forceRefresh = true }
            }
            if values.primary == id {
                for (publishID, publish) in values.publishes.sorted(by: { $0.value.sequence < $1.value.sequence })
                where publish.sentOn == nil && publish.claimedBy == nil {
                    values.publishes[publishID]?.claimedBy = id
                    batch.publishes.append(publishID)
                    if publish.authRefusals > 0 { batch.forceRefresh = true }
                }
            }
            return batch
        }
    }

    /// Step 3: keeps what is still wanted on link `id`, marks it sent and signs it; or, without credentials,
    /// fails it (but a session that threw for a subscription that was live replaces the link instead).
    func finishBatch(_ batch: SendBatch, _ fetched: SendTimeCredentials, on id: Int) -> [WebSocketMessage] {
        let plan: SendPlan? = update { values, effects in
            var claimed: [String] = []
            for publishID in batch.publishes where values.publishes[publishID]?.claimedBy == id {
                values.publishes[publishID]?.claimedBy = nil
                claimed.append(publishID)
            }
            guard let link = values.links[id], let control = link.control, !control.isEnding else {
                // The link is ending: its successor sends all of it (linkEnded resets the subscriptions).
                wakePrimary(if: !claimed.isEmpty, &values, &effects)
                return nil
            }
            if case .cancelled = fetched { return nil }
            let subscribes = batch.subscribes.compactMap { subscriptionID -> (id: String, channel: String)? in
                guard let record = values.subscriptions[subscriptionID], !link.subscribed.contains(subscriptionID),
                    Self.wants(record, on: id, values)
                else { return nil }
                return (subscriptionID, record.channel)
            }
            // A cut-over may have made another link primary meanwhile: it sends the publishes.
            let publishes = values.primary == id ? claimed.filter { values.publishes[$0]?.sentOn == nil } : []
            wakePrimary(if: values.primary != id && !claimed.isEmpty, &values, &effects)
            let failure: (_ use: String, _ channel: String) -> RealtimeError
            switch fetched {
            case .credentials:
                var plan = SendPlan(unsubscribes: batch.unsubscribes)
                plan.subscribes = subscribes
                for subscribe in subscribes { values.links[id]?.subscribed.insert(subscribe.id) }
                for publishID in publishes {
                    guard let publish = values.publishes[publishID] else { continue }
                    values.publishes[publishID]?.sentOn = id
                    plan.publishes.append((publishID, publish.channel, publish.events))
                }
                return plan
            case .signedOut:
                failure = { _, _ in .signedOut }
            case .unavailable(let error):
                // A throw may be a blip (a refresh while offline): a subscription that was live is not ended for it. As
                // when the session is silent, the link is replaced and its successor sends the whole batch; a few times
                // only, as a session may throw only when forced to refresh (the link's own connect then succeeds).
                let wasLive = subscribes.compactMap { values.subscriptions[$0.id] }.filter { $0.liveness != .pending }
                if !wasLive.isEmpty, wasLive.allSatisfy({ $0.detail.credentialsThrows < ReconnectBookkeeping.credentialsRetries }) {
                    for record in wasLive { values.subscriptions[record.id]?.detail.credentialsThrows += 1 }
                    logger.warning("credentials unavailable to subscribe again; replacing the link", metadata: ["link": "\(id)"])
                    effects.append(.close(control, .credentialsTimeout(credentialsTimeout), "no credentials"))
                    return nil
                }
                failure = { use, channel in .sessionExpired("credentials unavailable to \(use) \(channel): \(error)") }
            case .cancelled:
                return nil
            }
            // No credentials: what needed them fails; the link and everything already on it carry on.
            // The session's own error stays out of the log: only the streams and publishes carry it.
            logger.warning(
                "no credentials to subscribe or publish with",
                metadata: [
                    "reason": "\(fetched.isSignedOut ? "signed out" : "credentials unavailable")",
                    "count": "\(subscribes.count + publishes.count)",
                ])
            for subscribe in subscribes {
                guard let record = values.subscriptions.removeValue(forKey: subscribe.id) else { continue }
                effects.append(.finish(record.sink, failure("subscribe to", record.channel)))
            }
            for publishID in publishes {
                guard let publish = values.publishes.removeValue(forKey: publishID) else { continue }
                effects.append(.reply(publish.reply, .failure(failure("publish to", publish.channel))))
            }
            rotationProgress(&values, &effects)
            closeIfIdle(&values, &effects)
            return SendPlan(unsubscribes: batch.unsubscribes)
        }
        guard let plan else { return [] }
        var messages: [WebSocketMessage] = []
        var authorizer: AppSyncAuthorizer?
        if case .credentials(let credentials) = fetched {
            authorizer = AppSyncAuthorizer(endpoint: endpoint, credentials: credentials, now: { [wallClock] in wallClock.now() })
        }
        for subscribe in plan.subscribes {
            guard let authorizer else { break }
            let authorization = authorizer.authorization(body: AppSyncOutboundMessage.subscribeSigningBody(channel: subscribe.channel))
            messages.append(
                .text(AppSyncOutboundMessage.subscribe(id: subscribe.id, channel: subscribe.channel, authorization: authorization)))
        }
        for subscriptionID in plan.unsubscribes { messages.append(.text(AppSyncOutboundMessage.unsubscribe(id: subscriptionID))) }
        for publish in plan.publishes {
            guard let authorizer else { break }
            let authorization = authorizer.authorization(
                body: AppSyncOutboundMessage.publishBody(channel: publish.channel, events: publish.events))
            messages.append(
                .text(
                    AppSyncOutboundMessage.publish(
                        id: publish.id, channel: publish.channel, events: publish.events, authorization: authorization)))
        }
        return messages
    }

    /// Whether `record` is to be subscribed on link `id`: it delivers there (primary) or moves there (rotation target).
    /// Never on a rotation's old link once it is being unsubscribed there.
    private static func wants(_ record: AppSyncSubscription, on id: Int, _ values: borrowing Values) -> Bool {
        if let rotation = values.rotation, rotation.from == id, rotation.awaitingUnsubscribe != nil { return false }
        return (values.primary == id && record.link == id) || (values.rotation?.to == id && record.detail.rotationTarget == id)
    }

    private func wakePrimary(if condition: Bool, _ values: inout Values, _ effects: inout [SessionEffect]) {
        guard condition, let primary = values.primary, let control = values.links[primary]?.control else { return }
        effects.append(.wake(control))
    }
}
