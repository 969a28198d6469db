import RealtimeTesting
import SubscriberCore

/// Reads an `AsyncStream` in the background so a test can await its values.
final class ValueProbe<Value: Sendable>: Sendable {
    private let values = Locked<[Value]>([])
    private let cursor = Locked(0)
    private let task: Task<Void, Never>

    init(_ stream: AsyncStream<Value>) {
        let values = self.values
        task = Task { for await value in stream { values.withLock { $0.append(value) } } }
    }

    var received: [Value] { values.withLock { $0 } }

    /// The next value not yet returned.
    func next(timeout: Double = scriptedWait) async throws -> Value {
        try await withTestTimeout(timeout, "the next value") { [values, cursor] in
            while true {
                let next: Value? = cursor.withLock { index in
                    values.withLock { list in
                        guard index < list.count else { return nil }
                        defer { index += 1 }
                        return list[index]
                    }
                }
                if let next { return next }
                try await TestTime.pollPause()
            }
        }
    }

    /// Waits until at least `count` values arrived.
    func waitForCount(_ count: Int, timeout: Double = scriptedWait) async throws {
        try await withTestTimeout(timeout, "\(count) values") { [values] in
            while values.withLock({ $0.count }) < count { try await TestTime.pollPause() }
        }
    }

    func cancel() { task.cancel() }
}
