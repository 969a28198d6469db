import Foundation
import SubscriberCore

/// The messages a connection has read, between NIO's event loop, which adds a read's worth at a time, and the link's
/// reader, which takes everything there is at once.
///
/// Bounded in messages and in bytes: once ``highWatermark`` messages or ``highWatermarkBytes`` bytes of payload wait,
/// the event loop stops reading from the socket (backpressure) until the reader has taken enough to bring the queue
/// under both again. The read that crosses a line still lands, so the queue holds at most 255 messages and under
/// 4 MiB plus one read's messages: a read takes at most 4 × 64 KiB from the socket (NIO's `maxMessagesPerRead` and
/// receive allocator), and may complete one message of up to `maxMessageSize` begun in earlier reads.
final class WebSocketInbound: Sendable {
    /// Messages queued before reading from the socket pauses.
    static let highWatermark = 256
    /// Payload bytes queued before reading pauses: a count alone let 256 messages of the 2 MiB limit (512 MiB) wait.
    static let highWatermarkBytes = 4 * 1024 * 1024

    private struct State {
        var messages: [WebSocketMessage] = []
        /// The payload bytes of `messages`.
        var bytes = 0
        /// Set once no more messages will come after the queued ones (`nil` error: a normal end).
        var end: (any Error)?? = nil
        var waiter: CheckedContinuation<[WebSocketMessage]?, any Error>?
        /// What the waiting reader takes: everything, or one message.
        var waiterTakes: (@Sendable (inout State) -> [WebSocketMessage])?
        /// Reading was paused for a full queue and not yet turned back on.
        var paused = false

        var isFull: Bool { messages.count >= WebSocketInbound.highWatermark || bytes >= WebSocketInbound.highWatermarkBytes }

        mutating func takeAll() -> [WebSocketMessage] {
            defer {
                messages = []
                bytes = 0
            }
            return messages
        }

        mutating func takeFirst() -> [WebSocketMessage] {
            let first = messages.removeFirst()
            bytes -= first.payloadByteCount
            return [first]
        }
    }

    private let state = Locked(State())
    /// Turns reading back on (hops to the event loop); set by the connector once the channel exists.
    private let resumeReading = Locked<(@Sendable () -> Void)?>(nil)

    func onResumeReading(_ resume: @escaping @Sendable () -> Void) {
        resumeReading.withLock { $0 = resume }
    }

    /// What waits for the reader: messages, their payload bytes, and whether reading is paused for them (for tests).
    var backlog: (messages: Int, bytes: Int, paused: Bool) {
        state.withLock { ($0.messages.count, $0.bytes, $0.paused) }
    }

    /// Whether a reader waits for messages (for tests).
    var isAwaited: Bool { state.withLock { $0.waiter != nil } }

    /// Event loop: queues one read's messages. Returns `true` when reading should pause.
    func append(_ batch: [WebSocketMessage]) -> Bool {
        let (waiter, taken, pause) = state.withLock {
            state -> (CheckedContinuation<[WebSocketMessage]?, any Error>?, [WebSocketMessage], Bool) in
            guard state.end == nil else { return (nil, [], false) }
            state.messages.append(contentsOf: batch)
            state.bytes += batch.reduce(0) { $0 + $1.payloadByteCount }
            var (waiter, taken): (CheckedContinuation<[WebSocketMessage]?, any Error>?, [WebSocketMessage]) = (nil, [])
            if let waiting = state.waiter, let takes = state.waiterTakes {
                state.waiter = nil
                state.waiterTakes = nil
                (waiter, taken) = (waiting, takes(&state))
            }
            // What a one-message reader leaves of the batch counts too.
            guard state.isFull else { return (waiter, taken, false) }
            state.paused = true
            return (waiter, taken, true)
        }
        waiter?.resume(returning: taken)
        return pause
    }

    /// No more messages after the queued ones: the reader gets them, then `nil` (or `error`).
    func finish(throwing error: (any Error)? = nil) {
        let waiter = state.withLock { state -> CheckedContinuation<[WebSocketMessage]?, any Error>? in
            if state.end == nil { state.end = .some(error) }
            defer {
                state.waiter = nil
                state.waiterTakes = nil
            }
            return state.waiter
        }
        guard let waiter else { return }
        if let error { waiter.resume(throwing: error) } else { waiter.resume(returning: nil) }
    }

    /// Everything queued, waiting for at least one message; `nil` at the end.
    func next() async throws -> [WebSocketMessage]? {
        try await take { state in state.takeAll() }
    }

    /// The oldest queued message, waiting for one; `nil` at the end.
    func nextOne() async throws -> WebSocketMessage? {
        try await take { state in state.takeFirst() }?.first
    }

    private func take(_ part: @escaping @Sendable (inout State) -> [WebSocketMessage]) async throws -> [WebSocketMessage]? {
        if Task.isCancelled { throw CancellationError() }
        if let ready = takeReady(part) { return try ready.get() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[WebSocketMessage]?, any Error>) in
                // The event loop may have queued (and paused) between the first look and now.
                let ready = takeReady(part) { state in
                    state.waiter = continuation
                    state.waiterTakes = part
                }
                if let ready { return continuation.resume(with: ready) }
                // A cancellation after the first look and before the waiter was stored found no waiter to end: without
                // this the reader waited for the next frame, and a cancelled link scope for a server that sent none
                // (found by the soak: a `tail` that could not finish its shutdown).
                if Task.isCancelled { cancelWaiter() }
            }
        } onCancel: {
            cancelWaiter()
        }
    }

    /// Ends the waiting reader, if any, with `CancellationError`.
    private func cancelWaiter() {
        let waiter = state.withLock { state -> CheckedContinuation<[WebSocketMessage]?, any Error>? in
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(throwing: CancellationError())
    }

    /// Takes what is ready, turning reading back on if a full queue had paused it and is no longer full; `orElse` runs
    /// under the same lock when nothing is ready.
    private func takeReady(
        _ part: (inout State) -> [WebSocketMessage], orElse: (inout State) -> Void = { _ in }
    ) -> Result<[WebSocketMessage]?, any Error>? {
        let (ready, resume) = state.withLock { state -> (Result<[WebSocketMessage]?, any Error>?, Bool) in
            guard let ready = Self.ready(&state, part) else {
                orElse(&state)
                return (nil, false)
            }
            // Not before the queue is under both lines: a reader taking one message at a time would otherwise let in a
            // whole read for each message it takes, and the queue would grow as long as the server sends.
            guard state.paused, !state.isFull else { return (ready, false) }
            state.paused = false
            return (ready, true)
        }
        if resume { resumeReading.withLock { $0 }?() }
        return ready
    }

    /// What a reader gets without waiting, if anything.
    private static func ready(_ state: inout State, _ part: (inout State) -> [WebSocketMessage]) -> Result<[WebSocketMessage]?, any Error>?
    {
        if !state.messages.isEmpty { return .success(part(&state)) }
        guard let end = state.end else { return nil }
        return end.map { .failure($0) } ?? .success(nil)
    }
}

extension WebSocketMessage {
    /// The payload's size in bytes (O(1): native strings keep their UTF-8 count).
    fileprivate var payloadByteCount: Int {
        switch self {
        case .text(let text): text.utf8.count
        case .binary(let data): data.count
        }
    }
}
