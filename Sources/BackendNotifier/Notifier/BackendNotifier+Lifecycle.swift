import Foundation
import SubscriberCore

extension BackendNotifier {
    // MARK: Identity

    /// Sign-in, sign-out or a switch of organization: unsubscribes everything, disconnects, and (when signed in)
    /// reconnects with the new identity and resubscribes what is observed. Observers keep their streams.
    public func update(userId: String?, organizationId: String?) async {
        guard userId != self.userId || organizationId != self.organizationId else { return }
        stopUpstreams()
        generation += 1
        resumeGaps.removeAll()
        await transport.disconnect()
        self.userId = userId
        self.organizationId = organizationId
        if userId == nil {
            emit(.signedOut)
            return
        }
        for upstream in Upstream.allCases { ensureRunning(upstream) }
    }

    // MARK: App lifecycle

    /// The app went to the background: after ``NotifierConfiguration/backgroundGrace`` the connection closes
    /// (a quick app switch keeps it). Wire this to the platform's lifecycle notification.
    public func enterBackground() {
        backgroundTask?.cancel()
        let grace = configuration.backgroundGrace
        backgroundTask = Task { [weak self, clock] in
            do { try await clock.sleep(for: grace, tolerance: nil) } catch { return }
            await self?.suspend()
        }
    }

    /// The app is in the foreground again: reconnects at once and resubscribes; each stream reports `resumed` with
    /// the window it was suspended.
    public func enterForeground() {
        backgroundTask?.cancel()
        backgroundTask = nil
        guard let since = suspendedAt else { return }
        suspendedAt = nil
        for upstream in Upstream.allCases where hubs.isDemanded(upstream) { resumeGaps[upstream] = since }
        for upstream in Upstream.allCases { ensureRunning(upstream) }
    }

    /// Whether the background grace delay has passed and the connection is closed.
    public var isSuspended: Bool { suspendedAt != nil }

    private func suspend() async {
        guard suspendedAt == nil else { return }
        suspendedAt = wallClock.now()
        backgroundTask = nil
        stopUpstreams()
        generation += 1
        await transport.disconnect()
        emit(.suspended)
    }

    // MARK: Switching transports (rollback)

    /// Moves every observed stream to `newTransport` without ending any observer's stream: subscribes everything
    /// there, cuts over once all of it is live, then disconnects the old transport. Events published inside the
    /// reported window (``NotifierConnectionEvent/transportSwitched(from:to:gap:reason:)``) may be missing.
    ///
    /// - Throws: when the new transport does not get every stream live within
    ///   ``NotifierConfiguration/switchTimeout``; the old transport then stays in use.
    public func switchTransport(to newTransport: any RealtimeTransport, because reason: TransportSwitchReason = .requested) async throws {
        let old = transport
        let switchStarted = wallClock.now()
        generation += 1
        let switchGeneration = generation
        var prepared: [Upstream: UpstreamRun] = [:]
        if suspendedAt == nil {
            for upstream in Upstream.allCases where hubs.isDemanded(upstream) {
                if let run = start(upstream, on: newTransport, delivering: false, generation: switchGeneration) { prepared[upstream] = run }
            }
        }
        if !prepared.isEmpty {
            do {
                try await waitUntilLive(Set(prepared.keys), generation: switchGeneration)
            } catch {
                for run in prepared.values { run.task.cancel() }
                await newTransport.disconnect()
                logger.warning("transport switch abandoned", metadata: ["to": "\(newTransport.name)", "error": "\(error)"])
                throw error
            }
        }
        // Cut over: the old upstreams stop delivering the instant the new ones start.
        for run in runs.values {
            run.gate.withLock { $0 = false }
            run.task.cancel()
        }
        for run in prepared.values { run.gate.withLock { $0 = true } }
        runs = prepared
        transport = newTransport
        stopObservingStates()
        for upstream in Upstream.allCases { ensureRunning(upstream) }
        await old.disconnect()
        let gap = GapWindow(start: switchStarted, end: wallClock.now())
        metrics.transportSwitch(from: old.name, to: newTransport.name)
        logger.info("switched transport", metadata: ["from": "\(old.name)", "to": "\(newTransport.name)", "gap": "\(gap)"])
        emit(.transportSwitched(from: old.name, to: newTransport.name, gap: gap, reason: reason))
    }

    /// A subscription that proves a transport can serve this user (the role stream's), for health probes.
    public func healthProbeRequest(for dialect: TransportDialect) -> SubscriptionRequest? {
        Upstream.role.request(dialect: dialect, userId: userId, organizationId: organizationId, namespace: configuration.channelNamespace)
    }

    private func waitUntilLive(_ upstreams: Set<Upstream>, generation switchGeneration: Int) async throws {
        let timeout = configuration.switchTimeout
        let timer = Task { [weak self, clock] in
            do { try await clock.sleep(for: timeout, tolerance: nil) } catch { return }
            await self?.failSwitch(switchGeneration, RealtimeError.connectionTimedOut(timeout))
        }
        defer { timer.cancel() }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            pendingSwitches[switchGeneration] = PendingSwitch(waiting: upstreams, continuation: continuation)
        }
    }

    private func failSwitch(_ switchGeneration: Int, _ error: any Error) {
        pendingSwitches.removeValue(forKey: switchGeneration)?.continuation.resume(throwing: error)
    }
}
