import SubscriberCore

/// Records every value of a stream as it arrives.
final class ValueRecorder<Value: Sendable>: Sendable {
    private let recorded = Locked<[Value]>([])
    private let task: Task<Void, Never>

    init(_ stream: AsyncStream<Value>) {
        let recorded = recorded
        task = Task { for await value in stream { recorded.withLock { $0.append(value) } } }
    }

    var values: [Value] { recorded.withLock { $0 } }

    deinit { task.cancel() }
}
