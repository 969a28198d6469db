import Foundation
import SubscriberCore

/// A fake ``RealtimeTransport`` a test drives directly: it records every subscription request and lets the test
/// push events into, fail, or complete each one. For testing code built on the notifier without a socket.
public final class ScriptedTransport: RealtimeTransport, Sendable {
    /// One subscription the code under test opened.
    public struct Subscription: Sendable {
        /// Its position among all subscriptions opened (0-based).
        public let index: Int
        /// What was asked for.
        public let request: SubscriptionRequest
        let continuation: AsyncThrowingStream<SubscriptionEvent, any Error>.Continuation
        let cancelled: Locked<Bool>

        /// Whether the consumer cancelled it.
        public var isCancelled: Bool { cancelled.withLock { $0 } }

        /// Delivers an event to it; `false` when its buffer was full and the event was dropped (or it had ended).
        @discardableResult
        public func send(_ event: SubscriptionEvent) -> Bool {
            if case .enqueued = continuation.yield(event) { return true }
            return false
        }

        /// Delivers a payload given as JSON text.
        @discardableResult
        public func send(json: String) -> Bool { send(.payload(RealtimePayload(json: Data(json.utf8)))) }

        /// Ends it normally or with an error.
        public func finish(throwing error: (any Error)? = nil) { continuation.finish(throwing: error) }
    }

    private struct State {
        var subscriptions: [Subscription] = []
        var disconnects = 0
        var verifications = 0
        var published: [PublishRequest] = []
        var lastFailure: String?
        var lostAt: Date?
    }

    /// The transport's name.
    public let name: String
    /// The dialect it claims to speak.
    public let dialect: TransportDialect
    /// Events buffered per subscription (`nil`: unbounded), like a real transport's `subscriptionBufferLimit`: when
    /// the consumer lags further behind, the newest events are dropped.
    public let bufferLimit: Int?
    private let state = Locked(State())
    private let states = ConnectionStateBroadcaster()

    /// Creates a transport speaking `dialect`, buffering at most `bufferLimit` events per subscription.
    public init(name: String? = nil, dialect: TransportDialect, bufferLimit: Int? = nil) {
        self.name = name ?? dialect.rawValue
        self.dialect = dialect
        self.bufferLimit = bufferLimit
    }

    /// Records the request and returns a stream the test feeds.
    public func subscribe(_ request: SubscriptionRequest) async -> AsyncThrowingStream<SubscriptionEvent, any Error> {
        let buffering: AsyncThrowingStream<SubscriptionEvent, any Error>.Continuation.BufferingPolicy =
            if let bufferLimit { .bufferingOldest(bufferLimit) } else { .unbounded }
        let (stream, continuation) = AsyncThrowingStream<SubscriptionEvent, any Error>.makeStream(bufferingPolicy: buffering)
        let cancelled = Locked(false)
        continuation.onTermination = { termination in
            if case .cancelled = termination { cancelled.withLock { $0 = true } }
        }
        state.withLock { state in
            state.subscriptions.append(
                Subscription(index: state.subscriptions.count, request: request, continuation: continuation, cancelled: cancelled))
        }
        return stream
    }

    /// Records the publish and accepts every event.
    public func publish(_ request: PublishRequest) async throws -> PublishResult {
        state.withLock { $0.published.append(request) }
        return PublishResult(successful: request.events.indices.map { PublishedEvent(identifier: "e\($0)", index: $0) }, failed: [])
    }

    /// Ends every subscription not yet cancelled with `error` (for example `RealtimeError.sessionExpired`), as a
    /// transport does when it stops for good.
    public func failAll(with error: any Error) {
        for subscription in activeSubscriptions { subscription.finish(throwing: error) }
    }

    /// Counts the call and ends every open subscription normally.
    public func disconnect() async {
        let open = state.withLock { state in
            state.disconnects += 1
            return state.subscriptions
        }
        for subscription in open { subscription.continuation.finish() }
    }

    /// Counts the call (``verifyConnectionCount``); there are no links to probe.
    public func verifyConnection() async {
        state.withLock { $0.verifications += 1 }
    }

    /// A stream of states the test sets with ``setState(_:failure:lostAt:)``.
    public func connectionStates() async -> AsyncStream<ConnectionState> { states.makeStream() }

    /// Sets the reported connection state; with `failure` and `lostAt`, first sets ``lastConnectionFailure`` and
    /// ``connectionLostAt`` (as a real transport records why and when it lost the connection before it reports
    /// `reconnecting`); `connected` forgets both.
    public func setState(_ newState: ConnectionState, failure: String? = nil, lostAt: Date? = nil) {
        state.withLock { state in
            if let failure { state.lastFailure = failure }
            if let lostAt { state.lostAt = lostAt }
            if newState == .connected { (state.lastFailure, state.lostAt) = (nil, nil) }
        }
        states.update(newState)
    }

    /// The failure the test gave with ``setState(_:failure:lostAt:)`` since the last `connected`.
    public var lastConnectionFailure: String? { state.withLock { $0.lastFailure } }

    /// The outage start the test gave with ``setState(_:failure:lostAt:)`` since the last `connected`.
    public var connectionLostAt: Date? { state.withLock { $0.lostAt } }

    /// Every subscription opened so far.
    public var subscriptions: [Subscription] { state.withLock { $0.subscriptions } }

    /// The subscriptions not cancelled by the consumer.
    public var activeSubscriptions: [Subscription] { subscriptions.filter { !$0.isCancelled } }

    /// How often `disconnect()` was called.
    public var disconnectCount: Int { state.withLock { $0.disconnects } }

    /// How often `verifyConnection()` was called.
    public var verifyConnectionCount: Int { state.withLock { $0.verifications } }

    /// Waits until `verifyConnection()` has been called `count` times in all (the notifier asks for it from a task of
    /// its own, after `enterForeground()` returned).
    public func waitForVerifications(_ count: Int, timeout: Double = scriptedWait) async throws {
        try await withTestTimeout(timeout, "\(count) verifyConnection() call(s)") { [state] in
            while state.withLock({ $0.verifications < count }) { try await TestTime.pollPause() }
        }
    }

    /// Waits for the first subscription opened after `index` (exclusive) whose request matches.
    public func waitForSubscription(
        after index: Int = -1, timeout: Double = scriptedWait,
        where matches: @escaping @Sendable (SubscriptionRequest) -> Bool = { _ in true }
    ) async throws -> Subscription {
        try await withTestTimeout(timeout, "a matching subscription") { [state] in
            while true {
                if let found = state.withLock({ $0.subscriptions.first { $0.index > index && matches($0.request) } }) { return found }
                try await TestTime.pollPause()
            }
        }
    }
}
