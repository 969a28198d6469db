import Foundation
import Logging
import SubscriberCore

/// Rotation before the maximum connection duration, without a gap and without duplicates:
/// 1. open a second link and subscribe everything there (same ids);
/// 2. while it confirms, the old link keeps delivering and logs what it delivers; the new one buffers;
/// 3. once everything is live on the new link, unsubscribe on the old one and wait for the confirmations, after which
///    the old link cannot deliver anything more;
/// 4. cut over: deliver the new link's buffer minus the copies the old one already delivered (matched by payload
///    bytes, as events carry no ids), then close the old link. Copies still in flight on the new link are dropped as
///    they arrive, for a grace period of ``AppSyncEventsConfiguration/rotationTimeout``.
///
/// Limitation (documented): two events with byte-identical payloads published inside the rotation window can be
/// taken for one. Vortex events carry a timestamp, so this does not happen in practice.
extension AppSyncState {
    /// Step 3, once every subscription is live on the new link.
    func rotationProgress(_ values: inout Values, _ effects: inout [SessionEffect]) {
        guard let rotation = values.rotation, let new = rotation.to, rotation.awaitingUnsubscribe == nil else { return }
        let records = values.subscriptions.values
        guard records.allSatisfy({ $0.rotationTarget == new && $0.rotationLive }) else { return }
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

    /// Step 4.
    func finalizeRotation(_ values: inout Values, _ effects: inout [SessionEffect]) {
        guard let rotation = values.rotation, let new = rotation.to, let newControl = values.links[new]?.control else { return }
        values.rotation = nil
        cutOver(to: new, &values, &effects)
        effects.append(.schedule(newControl, rotationTimeout, Self.overlapExpiryToken))
        if let oldControl = values.links[rotation.from]?.control {
            effects.append(.close(oldControl, .rotated, "rotated"))
        }
        logger.info("rotation complete")
    }

    /// The old link died during a rotation: cut over at once if the new one is up. Returns whether it did.
    func salvageRotation(_ values: inout Values, _ effects: inout [SessionEffect]) -> Bool {
        guard let rotation = values.rotation, let new = rotation.to, let control = values.links[new]?.control else { return false }
        values.rotation = nil
        cutOver(to: new, &values, &effects)
        effects.append(.schedule(control, rotationTimeout, Self.overlapExpiryToken))
        logger.info("old connection ended during rotation; cut over early")
        return true
    }

    /// Gives up a rotation: the old link goes on; the new one, if any, is closed.
    func abortRotation(_ values: inout Values, _ effects: inout [SessionEffect]) {
        guard let rotation = values.rotation else { return }
        values.rotation = nil
        for key in values.subscriptions.keys {
            values.subscriptions[key]?.clearRotation()
            values.subscriptions[key]?.overlapLog = []
        }
        if let new = rotation.to, let control = values.links[new]?.control {
            effects.append(.close(control, .requested, "rotation aborted"))
        }
    }

    /// Moves delivery of every subscription to `new`, delivering what it buffered minus what the old link delivered.
    private func cutOver(to new: Int, _ values: inout Values, _ effects: inout [SessionEffect]) {
        let now = wallClock.now()
        values.primary = new
        for id in values.subscriptions.values.sorted(by: { $0.sequence < $1.sequence }).map(\.id) {
            guard var record = values.subscriptions[id] else { continue }
            if record.rotationTarget == new && record.rotationLive {
                for payload in record.rotationBuffer where !record.consumeOverlap(payload.json) {
                    effects.append(.yield(record.sink, .payload(payload)))
                }
                if let event = record.confirm(now: now) { effects.append(event) }
            } else {
                // Not confirmed on the new link yet: it resumes (with its gap) when it is.
                record.interrupt(at: now.addingTimeInterval(-margin))
            }
            record.deliveringOn = new
            record.clearRotation()
            values.subscriptions[id] = record
        }
        if let control = values.links[new]?.control { effects.append(.wake(control)) }
    }
}
