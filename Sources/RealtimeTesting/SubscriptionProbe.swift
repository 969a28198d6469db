import SubscriberCore

/// Reads a subscription stream in the background so a test can await its events one by one, see how it ended,
/// and cancel it (which is how a consumer unsubscribes).
public final class SubscriptionProbe: Sendable {
    /// How the stream ended.
    public enum Ending: Sendable {
        /// Finished normally.
        case finished
        /// Finished with an error.
        case failed(any Error)
    }

    private struct State {
        var events = ReadLog<SubscriptionEvent>()
        var ending: Ending?
    }

    private let state = Locked(State())
    private let task: Locked<Task<Void, Never>?> = Locked(nil)

    /// Starts reading `stream`.
    public init(_ stream: AsyncThrowingStream<SubscriptionEvent, any Error>) {
        let state = self.state
        task.withLock {
            $0 = Task {
                do {
                    for try await event in stream { state.withLock { $0.events.append(event) } }
                    state.withLock { $0.ending = .finished }
                } catch {
                    state.withLock { $0.ending = .failed(error) }
                }
            }
        }
    }

    /// Every event received so far.
    public var events: [SubscriptionEvent] { state.withLock { $0.events.all } }

    /// The payload texts received so far.
    public var payloadTexts: [String] {
        events.compactMap { if case .payload(let payload) = $0 { payload.text } else { nil } }
    }

    /// The next event not yet returned, waiting for it (by default for ``scriptedWait``, a bound on a hang).
    public func next(timeout: Double = scriptedWait) async throws -> SubscriptionEvent {
        try await withTestTimeout(timeout, "the next subscription event") { [state] in
            while true {
                if let next = state.withLock({ $0.events.next() }) { return next }
                if state.withLock({ $0.ending }) != nil { throw TestTimeoutError(what: "an event (the stream has ended)") }
                try await TestTime.pollPause()
            }
        }
    }

    /// Waits for the stream to end (by default for ``scriptedWait``).
    public func ending(timeout: Double = scriptedWait) async throws -> Ending {
        try await withTestTimeout(timeout, "the stream to end") { [state] in
            while true {
                if let ending = state.withLock({ $0.ending }) { return ending }
                try await TestTime.pollPause()
            }
        }
    }

    /// How it ended so far, if it has.
    public var currentEnding: Ending? { state.withLock { $0.ending } }

    /// Stops reading: the stream is cancelled, and the transport unsubscribes.
    public func cancel() { task.withLock { $0?.cancel() } }
}
