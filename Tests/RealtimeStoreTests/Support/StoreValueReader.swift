import RealtimeStore
import RealtimeTesting
import SubscriberCore

/// Reads a value stream of the store into an array, and what ended it.
final class StoreValueReader<Payload: Sendable & Equatable>: Sendable {
    private let state = Locked<(values: [StoreValue<Payload>], end: (any Error)?, ended: Bool)>(([], nil, false))
    private let task: Task<Void, Never>

    init(_ stream: AsyncThrowingStream<StoreValue<Payload>, any Error>) {
        let state = state
        task = Task {
            do {
                for try await value in stream { state.withLock { $0.values.append(value) } }
                state.withLock { $0.ended = true }
            } catch {
                state.withLock {
                    $0.end = error
                    $0.ended = true
                }
            }
        }
    }

    var values: [StoreValue<Payload>] { state.withLock { $0.values } }
    var end: (ended: Bool, error: (any Error)?) { state.withLock { ($0.ended, $0.end) } }

    func wait(for count: Int, _ what: String) async throws {
        try await withTestTimeout(10, what) {
            while self.values.count < count { try await TestTime.pollPause() }
        }
    }

    deinit { task.cancel() }
}
