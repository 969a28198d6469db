import Foundation

/// Runs blocking work (a pipe read, `waitUntilExit`) on a thread of its own, so it never holds one of the few threads
/// of Swift's cooperative pool: on a 2-core machine two blocked tests would stall every other test running beside them.
public func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try work() }) }.start()
    }
}
