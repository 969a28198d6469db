import Foundation

/// `vortex-realtime parity`: one identity signed in on both transports at once, each notifier observing its nine
/// streams, while traffic flows (scripted, caused by a command, or natural); then the events are matched and judged
/// (``ParityMatcher``).
public struct ShadowParityRunner: Sendable {
    /// The backend, credentials and identity.
    public let target: DrillTarget
    /// The matching tolerance, in seconds. Default 2.
    public var tolerance: TimeInterval = 2
    /// How long both sides may take to get live, in seconds. Default 15.
    public var liveTimeout: TimeInterval = 15
    /// How long nothing may arrive on either side before a settled run stops waiting for events still in flight.
    /// Default 0.3 s.
    public var settleQuiet: TimeInterval = 0.3
    /// How long after both sides are live the run starts, in seconds. Default 0.5. graphql-transport-ws acknowledges no
    /// subscription: a GraphQL stream reports `live` at its first event or once a confirmation window passed, and on a
    /// loaded server the subscription may start delivering a moment later, so an event published just then reaches
    /// AppSync only. Events that arrive before the start only pair; they are not judged alone.
    public var startSettle: TimeInterval = 0.5
    /// Progress lines.
    public var onProgress: @Sendable (String) -> Void = { _ in }

    /// Creates a runner.
    public init(target: DrillTarget) { self.target = target }

    /// Observes both sides from ``startSettle`` after both are live while `traffic` runs (it returns when the run should end:
    /// after a duration, on a signal, or when its events are out), then settles — waits until every event has its
    /// counterpart and nothing new arrived for ``settleQuiet``, at most ``tolerance`` (at least 0.5 s) — and judges.
    public func run(traffic: @Sendable () async throws -> Void) async throws -> ShadowParityReport {
        let observation = try await ShadowObservation.start(target)
        do {
            onProgress("parity: waiting for both notifiers (appsync, graphql) to be live as \(target.identity.user)")
            try await observation.waitUntilLive(timeout: liveTimeout)
            try await Task.sleep(for: .seconds(startSettle))
            let start = Date()
            onProgress("parity: observing")
            try await traffic()
            let end = Date()
            try await settle(observation, start: start, end: end)
            await observation.stop()
            return observation.judge(ParityMatcher(tolerance: tolerance), start: start, end: end)
        } catch {
            await observation.stop()
            throw error
        }
    }

    private func settle(_ observation: ShadowObservation, start: Date, end: Date) async throws {
        let matcher = ParityMatcher(tolerance: tolerance)
        let deadline = end.addingTimeInterval(max(0.5, tolerance))
        // Settled by itself is not enough: the traffic's last events may still be in flight to both sides.
        while Date() < deadline,
            !observation.settled(matcher, start: start, end: end) || observation.lastArrival > Date().addingTimeInterval(-settleQuiet)
        {
            try await Task.sleep(for: .milliseconds(100))
        }
    }
}
