import SubscriberCore

/// Carries the bound port (or the failure) from the server task to ``LocalBackendServer/start()``; resolves once.
final class StartupSignal: Sendable {
    private struct State {
        var outcome: Result<Int, any Error>?
        var waiter: CheckedContinuation<Int, any Error>?
    }

    private let state = Locked(State())

    func succeed(port: Int) { resolve(.success(port)) }

    func fail(_ error: any Error) { resolve(.failure(error)) }

    func wait() async throws -> Int {
        try await withCheckedThrowingContinuation { continuation in
            let outcome: Result<Int, any Error>? = state.withLock { state in
                if let outcome = state.outcome { return outcome }
                state.waiter = continuation
                return nil
            }
            if let outcome { continuation.resume(with: outcome) }
        }
    }

    private func resolve(_ outcome: Result<Int, any Error>) {
        let waiter: CheckedContinuation<Int, any Error>? = state.withLock { state in
            guard state.outcome == nil else { return nil }
            state.outcome = outcome
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(with: outcome)
    }
}
