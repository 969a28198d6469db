/// Batched delivery where task executors exist (Linux; Apple platforms from macOS 15 / iOS 18), plain delivery
/// elsewhere: the one type the engine and the notifier use, so neither repeats the availability check.
package final class BatchedDelivery: Sendable {
    private let executor: (any Sendable)?

    /// Starts a ``BatchingExecutor`` thread named `name` where available.
    package init(name: String) {
        if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *) {
            executor = BatchingExecutor(name: name)
        } else {
            executor = nil
        }
    }

    /// Runs `body` as a reader whose deliveries are batched (see ``BatchingExecutor/run(_:)``).
    package func run<T: Sendable>(_ body: @Sendable () async -> T) async -> T {
        if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *), let executor = executor as? BatchingExecutor {
            return await executor.run(body)
        }
        return await body()
    }

    /// Ends the thread (see ``BatchingExecutor/stop()``).
    package func stop() {
        if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *), let executor = executor as? BatchingExecutor {
            executor.stop()
        }
    }
}
