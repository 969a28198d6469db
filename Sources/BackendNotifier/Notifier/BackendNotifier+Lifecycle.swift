import Foundation
import Logging
import SubscriberCore

extension BackendNotifier {
    // MARK: Identity

    /// Sign-in, sign-out, a switch of organization, or signing in again after `sessionExpired` / `signedOut`: stops
    /// every upstream, disconnects, and (when signed in) resubscribes everything observed with the new identity.
    /// Observers keep their streams.
    ///
    /// With an unchanged identity it does nothing, unless an observed upstream is not running (after
    /// `sessionExpired`, `signedOut` or a failed stream): then it restarts every observed upstream. The new identity
    /// is in place before anything suspends, and identity updates, switches, suspension and resumption run one at a
    /// time, so no upstream ever subscribes with another identity than the current one.
    public func update(userId: String?, organizationId: String?) async {
        await gate.acquire()
        let changed = userId != self.userId || organizationId != self.organizationId
        let stalled = suspendedAt == nil && Upstream.allCases.contains { hubs.isDemanded($0) && runs[$0] == nil }
        guard changed || sessionEnded || (userId != nil && stalled) else { return finishOperation() }
        stopUpstreams()
        generation += 1
        self.userId = userId
        self.organizationId = organizationId
        resumeGaps.removeAll()
        sessionEnded = false
        networkErrorReported = false
        refreshState()
        await transport.disconnect()
        if userId == nil { emit(.signedOut) }
        finishOperation()
    }

    /// Starts what observers asked for while the operation ran, then lets the next operation in. Nothing may suspend
    /// between the two, or an observer arriving in between would wait for the next operation.
    func finishOperation() {
        startDemanded()
        gate.release()
    }

    // MARK: App lifecycle

    /// The app went to the background: after ``NotifierConfiguration/backgroundGrace`` the connection closes
    /// (a quick app switch keeps it). Wire this to the platform's lifecycle notification.
    public func enterBackground() {
        backgroundTask?.cancel()
        let grace = configuration.backgroundGrace
        backgroundTask = scope.spawn { [weak self, clock] in
            do { try await clock.sleep(for: grace, tolerance: nil) } catch { return }
            await self?.suspend()
        }
    }

    /// The app is in the foreground again: reconnects at once and resubscribes; each stream reports `resumed` with
    /// the window it was suspended. A connection kept through a short background stay is checked at once instead
    /// (``RealtimeTransport/verifyConnection()``: probed, and replaced if it died meanwhile).
    public func enterForeground() async {
        backgroundTask?.cancel()
        backgroundTask = nil
        await gate.acquire()
        defer { finishOperation() }
        guard let since = suspendedAt else {
            await transport.verifyConnection()
            return
        }
        suspendedAt = nil
        for upstream in Upstream.allCases where hubs.isDemanded(upstream) { resumeGaps[upstream] = since }
        startDemanded()
    }

    /// Whether the background grace delay has passed and the connection is closed.
    public var isSuspended: Bool { suspendedAt != nil }

    private func suspend() async {
        await gate.acquire()
        defer { finishOperation() }
        guard suspendedAt == nil, !Task.isCancelled else { return }
        suspendedAt = wallClock.now()
        backgroundTask = nil
        stopUpstreams()
        generation += 1
        refreshState()
        await transport.disconnect()
        emit(.suspended)
    }

    // MARK: Switching transports (rollback)

    /// Moves every observed stream to `newTransport` without ending any observer's stream: subscribes everything
    /// there, cuts over once all of it is live, then disconnects the old transport. Events published inside the
    /// reported window (``NotifierConnectionEvent/transportSwitched(from:to:gap:reason:)``) may be missing. The
    /// connection state, metrics and events follow the new transport from the cut-over on.
    ///
    /// Runs one at a time with identity updates, other switches, suspension and resumption.
    ///
    /// - Throws: when the new transport does not get every stream live within
    ///   ``NotifierConfiguration/switchTimeout``; the old transport then stays in use.
    public func switchTransport(to newTransport: any RealtimeTransport, because reason: TransportSwitchReason = .requested) async throws {
        await gate.acquire()
        defer { finishOperation() }
        let old = transport
        let switchStarted = wallClock.now()
        generation += 1
        let switchGeneration = generation
        var prepared: [Upstream: UpstreamRun] = [:]
        if suspendedAt == nil && !sessionEnded {
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
        for (upstream, run) in prepared where !hubs.isDemanded(upstream) {
            run.task.cancel()
            prepared[upstream] = nil
        }
        for run in prepared.values { run.gate.withLock { $0 = true } }
        runs = prepared
        stopFollowingStates()
        transport = newTransport
        activeName.withLock { $0 = newTransport.name }
        networkErrorReported = false
        if !runs.isEmpty { followStates() }
        refreshState()
        // Observers that arrived during the switch start when it ends (finishOperation), on the new transport.
        await old.disconnect()
        // The gap rule of the transports: events still buffered in the old streams at the cut-over may have been
        // published a little before the switch started, so the window starts a safety margin earlier.
        let gap = GapWindow(start: switchStarted.addingTimeInterval(-EventRouter.lossMargin), end: wallClock.now())
        metrics.transportSwitch(from: old.name, to: newTransport.name)
        logger.info("switched transport", metadata: ["from": "\(old.name)", "to": "\(newTransport.name)", "gap": "\(gap)"])
        emit(.transportSwitched(from: old.name, to: newTransport.name, gap: gap, reason: reason))
    }

    /// A subscription that proves a transport can serve this user (the role stream's), for health probes.
    package func healthProbeRequest(for dialect: TransportDialect) -> SubscriptionRequest? {
        Upstream.role.request(
            dialect: dialect, userId: userId, organizationId: organizationId, namespace: configuration.channelNamespace,
            operations: configuration.graphQLOperations)
    }

    private func waitUntilLive(_ upstreams: Set<Upstream>, generation switchGeneration: Int) async throws {
        let timeout = configuration.switchTimeout
        let timer = scope.spawn { [weak self, clock] in
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
