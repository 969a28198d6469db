import Foundation
import Logging
import SubscriberCore

/// Rotation before the maximum connection duration, without a gap and without duplicates:
/// 1. open a second link and subscribe everything there (same ids);
/// 2. while it confirms, the old link keeps delivering and logs what it delivers; the new one buffers;
/// 3. once everything is live on the new link, unsubscribe on the old one and wait for the confirmations, after which
///    the old link cannot deliver anything more;
/// 4. cut over: deliver the new link's buffer minus the copies the old one already delivered (matched by payload
///    bytes, as events carry no ids), then close the old link, once the publishes sent on it are answered (their
///    replies come on no other link) or at the latest after ``AppSyncEventsConfiguration/rotationTimeout``. Copies
///    still in flight on the new link are dropped as they arrive, for a grace period of that same timeout.
///
/// Limitation (documented): two events with byte-identical payloads published inside the rotation window can be
/// taken for one. Vortex events carry a timestamp, so this does not happen in practice.
extension AppSyncState {
    /// Step 3, once every subscription is live on the new link.
    func rotationProgress(_ values: inout Values, _ effects: inout [SessionEffect]) {
        guard let rotation = values.rotation, let new = rotation.to, rotation.awaitingUnsubscribe == nil else { return }
        let records = values.subscriptions.values
        guard records.allSatisfy({ $0.detail.rotationTarget == new && $0.detail.rotationLive }) else { return }
        values.rotation?.awaitingUnsubscribe = Set(records.map(\.id))
        guard !records.isEmpty, let old = values.links[rotation.from], let control = old.control else {
            finalizeRotation(&values, &effects)
            return
        }
        for record in records.sorted(by: { $0.sequence < $1.sequence }) where old.subscribed.contains(record.id) {
            values.links[rotation.from]?.unsubscribeQueue.append(record.id)
        }
        if values.links[rotation.from]?.unsubscribeQueue.isEmpty == true {
            finalizeRotation(&values, &effects)
        } else {
            effects.append(.wake(control))
        }
    }

    /// Step 4. The old link delivered until `oldLastFrame`; `nil`: until now (it answered its unsubscribes).
    func finalizeRotation(oldLastFrame: Date? = nil, _ values: inout Values, _ effects: inout [SessionEffect]) {
        guard let rotation = values.rotation, let new = rotation.to, let newControl = values.links[new]?.control else { return }
        values.rotation = nil
        let lastFrame = oldLastFrame ?? wallClock.now()
        cutOver(to: new, oldLastFrame: lastFrame, lostAt: lastFrame.addingTimeInterval(-margin), &values, &effects)
        effects.append(.schedule(newControl, rotationTimeout, Self.overlapExpiryToken))
        if let oldControl = values.links[rotation.from]?.control {
            values.links[rotation.from]?.retired = true
            if values.publishes.values.contains(where: { $0.sentOn == rotation.from }) {
                effects.append(.schedule(oldControl, rotationTimeout, Self.drainDeadlineToken))
            }
            closeRetiredLinks(&values, &effects)
        }
        logger.info("rotation complete")
    }

    /// Closes every rotation's old link on which no publish awaits its reply any more.
    func closeRetiredLinks(_ values: inout Values, _ effects: inout [SessionEffect]) {
        for (id, link) in values.links where link.retired {
            guard let control = link.control, !control.isEnding, !values.publishes.values.contains(where: { $0.sentOn == id }) else {
                continue
            }
            effects.append(.close(control, .rotated, "rotated"))
        }
    }

    /// The drain deadline of a rotation's old link: what it carries is still unanswered, and is failed as such (the
    /// server may have taken it); the link closes.
    func endDrain(of id: Int, _ values: inout Values, _ effects: inout [SessionEffect]) {
        guard values.links[id]?.retired == true, let control = values.links[id]?.control, !control.isEnding else { return }
        logger.warning("publishes on the rotated connection not answered in time; closing it")
        for (publishID, publish) in values.publishes where publish.sentOn == id {
            values.publishes[publishID] = nil
            effects.append(.reply(publish.reply, .failure(Self.unansweredOnRotatedLink)))
        }
        effects.append(.close(control, .rotated, "rotated"))
        closeIfIdle(&values, &effects)
    }

    /// A publish sent on a rotation's old link and still unanswered when that link closed: the server may have taken it.
    /// ``RealtimeError`` has no case for an unknown outcome; `network` is what the publishes of any lost link fail with.
    static let unansweredOnRotatedLink = RealtimeError.network(
        "the connection was rotated before publish_success arrived: the publish may have been delivered")

    /// The old link died during a rotation: cut over at once if the new one is up. Returns whether it did. As for any
    /// lost link, what it carried after its last frame (minus the margin) may be lost: the gap opens there.
    func salvageRotation(after report: LinkReport, _ values: inout Values, _ effects: inout [SessionEffect]) -> Bool {
        guard let rotation = values.rotation, let new = rotation.to, let control = values.links[new]?.control else { return false }
        values.rotation = nil
        cutOver(
            to: new, oldLastFrame: report.lastReceived ?? wallClock.now(), lostAt: report.lossStart(margin: margin, now: wallClock.now()),
            &values, &effects)
        effects.append(.schedule(control, rotationTimeout, Self.overlapExpiryToken))
        logger.info("old connection ended during rotation; cut over early")
        return true
    }

    /// Gives up a rotation: the old link goes on; the new one is closed (if still connecting, when it opens). The old
    /// link keeps the unsubscribes it has not sent; what it has unsubscribed is subscribed there again and resumes with
    /// a gap from its confirmation on the new link (the new link's buffer, what came after, is given up).
    func abortRotation(_ values: inout Values, _ effects: inout [SessionEffect]) {
        guard let rotation = values.rotation else { return }
        values.rotation = nil
        if var old = values.links[rotation.from] {
            old.unsubscribeQueue.removeAll { values.subscriptions[$0] != nil }
            values.links[rotation.from] = old
            for key in values.subscriptions.keys where !old.subscribed.contains(key) {
                let since = values.subscriptions[key]?.detail.rotationConfirmedAt ?? wallClock.now()
                values.subscriptions[key]?.interrupt(at: since.addingTimeInterval(-margin))
            }
            if let control = old.control { effects.append(.wake(control)) }
        }
        for key in values.subscriptions.keys {
            values.subscriptions[key]?.detail.clearRotation()
            values.subscriptions[key]?.detail.overlapLog = []
        }
        if let new = rotation.to, let control = values.links[new]?.control {
            effects.append(.close(control, .requested, "rotation aborted"))
        }
    }

    /// Moves delivery of every subscription to `new`, delivering what it buffered minus what the old link delivered.
    /// The old link delivered until `oldLastFrame`; a gap opened by it starts at `lostAt`.
    private func cutOver(to new: Int, oldLastFrame: Date, lostAt: Date, _ values: inout Values, _ effects: inout [SessionEffect]) {
        values.primary = new
        values.links[new]?.successor = false
        for id in values.subscriptions.values.sorted(by: { $0.sequence < $1.sequence }).map(\.id) {
            guard var record = values.subscriptions[id] else { continue }
            if record.detail.rotationTarget == new, let confirmedAt = record.detail.rotationConfirmedAt {
                // Confirmed on the new link after the old one's last frame: what was sent in between reached neither
                // (unless the old link delivered to it after that confirmation).
                if confirmedAt > oldLastFrame, !record.detail.oldDeliveredSinceConfirmation { record.interrupt(at: lostAt) }
                // Its confirmation (and gap) first: the buffer holds what came after it.
                if let event = record.confirm(now: confirmedAt) { effects.append(event) }
                for payload in record.detail.rotationBuffer where !record.detail.consumeOverlap(payload.json) {
                    effects.append(.yield(record.sink, .payload(payload)))
                }
            } else {
                // Not confirmed on the new link yet: it resumes (with its gap) when it is.
                record.interrupt(at: lostAt)
            }
            record.link = new
            record.detail.clearRotation()
            values.subscriptions[id] = record
        }
        if let control = values.links[new]?.control { effects.append(.wake(control)) }
    }
}
