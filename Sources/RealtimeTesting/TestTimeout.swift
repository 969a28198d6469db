/// A test waited longer than it allowed for something to happen.
public struct TestTimeoutError: Error, Sendable, CustomStringConvertible {
    /// What was awaited.
    public var what: String
    /// Creates the error.
    public init(what: String) { self.what = what }
    public var description: String { "timed out waiting for \(what)" }
}

/// Runs `operation`, failing with ``TestTimeoutError`` if it takes longer than `seconds` of real time,
/// so a hang fails a test instead of blocking the suite.
public func withTestTimeout<T: Sendable>(
    _ seconds: Double = 10, _ what: String = "operation", _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await Task.sleep(for: .milliseconds(Int64(seconds * 1000)))
            throw TestTimeoutError(what: what)
        }
        defer { group.cancelAll() }
        guard let first = try await group.next() else { throw TestTimeoutError(what: what) }
        return first
    }
}
