import Foundation
import SubscriberCore

/// Rotation before the maximum connection duration, without a gap and without duplicates:
/// 1. open a second connection and subscribe everything there (same ids);
/// 2. while it confirms, the old connection keeps delivering and logs what it delivers; the new one buffers;
/// 3. once everything is live on the new one, unsubscribe on the old one and wait for the confirmations, after which
///    the old connection cannot deliver anything more;
/// 4. cut over: deliver the new connection's buffer minus the copies the old one already delivered (matched by
///    payload bytes, as events carry no ids), then close the old connection. Copies still in flight on the new
///    connection are dropped as they arrive, for a grace period of ``AppSyncEventsConfiguration/rotationTimeout``.
///
/// Limitation (documented): two events with byte-identical payloads published inside the rotation window can be
/// taken for one. Vortex events carry a timestamp, so this does not happen in practice.
extension AppSyncEventsTransport {
    func scheduleRotation(of generation: Int) {
        guard let maxDuration = configuration.maxConnectionDuration else { return }
        var delay = maxDuration - configuration.rotationLead
        if delay <= .zero { delay = maxDuration / 2 }
        links[generation]?.tasks.append(Task { [weak self, clock] in
            do { try await clock.sleep(for: delay, tolerance: nil) } catch { return }
            await self?.beginRotation(from: generation)
        })
    }

    func beginRotation(from old: Int) async {
        guard primary == old, rotation == nil, links[old]?.end == nil else { return }
        rotation = AppSyncRotation(from: old)
        logger.info("rotating the connection before its maximum duration")
        guard await auth.isSignedIn(), let credentials = try? await auth.credentials(forceRefresh: false) else {
            if rotation?.from == old { rotation = nil }
            return
        }
        let result = await establish(credentials: credentials)
        guard case .success(let new) = result else {
            if rotation?.from == old { rotation = nil }
            logger.warning("rotation could not open a new connection; keeping the old one")
            return
        }
        guard rotation?.from == old, rotation?.to == nil, primary == old, links[old]?.end == nil else {
            await close(new, as: .requested, message: "rotation abandoned")
            links[new] = nil
            return
        }
        rotation?.to = new
        let timeout = configuration.rotationTimeout
        rotation?.deadline = Task { [weak self, clock] in
            do { try await clock.sleep(for: timeout, tolerance: nil) } catch { return }
            await self?.rotationDeadlineReached(new)
        }
        let ids = subscriptions.values.sorted { $0.sequence < $1.sequence }.map(\.id)
        for id in ids {
            subscriptions[id]?.clearRotation()
            subscriptions[id]?.rotationTarget = new
        }
        for id in ids where subscriptions[id]?.rotationTarget == new {
            await sendSubscribe(id, on: new)
        }
        await rotationProgress()
    }

    /// Step 3: everything is live on the new connection, so unsubscribe on the old one.
    func rotationProgress() async {
        guard let current = rotation, let new = current.to, current.awaitingUnsubscribe == nil else { return }
        let records = subscriptions.values
        guard records.allSatisfy({ $0.rotationTarget == new && $0.rotationLive }) else { return }
        rotation?.awaitingUnsubscribe = Set(records.map(\.id))
        if records.isEmpty {
            await finalizeRotation()
            return
        }
        guard let oldLink = links[current.from], oldLink.end == nil else { return }
        for id in records.map(\.id) {
            try? await oldLink.connection.send(.text(AppSyncOutboundMessage.unsubscribe(id: id)))
        }
    }

    func finishRotationIfUnsubscribed() async {
        guard let awaiting = rotation?.awaitingUnsubscribe, awaiting.isEmpty else { return }
        await finalizeRotation()
    }

    private func rotationDeadlineReached(_ new: Int) async {
        guard rotation?.to == new else { return }
        logger.warning("rotation did not complete in time; cutting over anyway")
        await finalizeRotation()
    }

    /// Step 4.
    func finalizeRotation() async {
        guard let current = rotation, let new = current.to, links[new]?.end == nil else { return }
        rotation = nil
        current.deadline?.cancel()
        let unsent = cutOver(to: new)
        primary = new
        scheduleRotation(of: new)
        scheduleOverlapExpiry(on: new)
        logger.info("rotation complete")
        await close(current.from, as: .rotated, message: "rotated")
        for id in unsent { await sendSubscribe(id, on: new) }
    }

    /// Moves delivery of every subscription to `new`; returns the ids never subscribed there.
    private func cutOver(to new: Int) -> [String] {
        let now = wallClock.now()
        var unsent: [String] = []
        for id in subscriptions.values.sorted(by: { $0.sequence < $1.sequence }).map(\.id) {
            guard var record = subscriptions[id] else { continue }
            if record.rotationTarget == new && record.rotationLive {
                for payload in record.rotationBuffer where !record.consumeOverlap(payload.json) {
                    record.sink.yield(.payload(payload))
                }
                if !record.isLive {
                    if let start = record.interruptedAt {
                        record.sink.yield(.resumed(gap: GapWindow(start: start, end: now)))
                    } else {
                        record.sink.yield(.live)
                    }
                }
                record.isLive = true
                record.interruptedAt = nil
            } else {
                // Not confirmed on the new connection yet: it resumes (with its gap) when it is.
                if record.isLive { record.interruptedAt = record.interruptedAt ?? now }
                record.isLive = false
                if record.rotationTarget != new { unsent.append(id) }
            }
            record.deliveringOn = new
            record.clearRotation()
            subscriptions[id] = record
        }
        return unsent
    }

    /// The old connection died during a rotation: cut over to the new one at once if it is up.
    func salvageRotation() {
        guard let current = rotation, let new = current.to, links[new]?.acked == true, links[new]?.end == nil else {
            abortRotation()
            return
        }
        rotation = nil
        current.deadline?.cancel()
        let unsent = cutOver(to: new)
        primary = new
        scheduleRotation(of: new)
        scheduleOverlapExpiry(on: new)
        logger.info("old connection ended during rotation; cut over early")
        if !unsent.isEmpty {
            Task { for id in unsent { await self.sendSubscribe(id, on: new) } }
        }
    }

    /// Ends the grace period in which late copies from the new connection are still recognised.
    private func scheduleOverlapExpiry(on generation: Int) {
        let grace = configuration.rotationTimeout
        links[generation]?.tasks.append(Task { [weak self, clock] in
            do { try await clock.sleep(for: grace, tolerance: nil) } catch { return }
            await self?.expireOverlap()
        })
    }

    private func expireOverlap() {
        for id in Array(subscriptions.keys) { subscriptions[id]?.overlapLog = [] }
    }

    /// Gives up a rotation: the old connection goes on; the new one, if any, is closed.
    func abortRotation() {
        guard let current = rotation else { return }
        rotation = nil
        current.deadline?.cancel()
        for id in Array(subscriptions.keys) {
            subscriptions[id]?.clearRotation()
            subscriptions[id]?.overlapLog = []
        }
        if let new = current.to {
            if links[new]?.end == nil {
                Task { await self.close(new, as: .requested, message: "rotation aborted") }
            } else {
                links[new] = nil
            }
        }
        logger.warning("rotation aborted")
    }
}
