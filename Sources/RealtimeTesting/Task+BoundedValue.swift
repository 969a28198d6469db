extension Task where Failure == any Error {
    /// The task's value, waited for at most `seconds` (``scriptedWait`` by default, a bound on a hang): a task that never
    /// ends fails the test with ``TestTimeoutError`` instead of holding up the run (`value` alone would wait for ever).
    /// The task is cancelled on timeout.
    public func boundedValue(_ seconds: Double = scriptedWait) async throws -> Success {
        do {
            return try await withTestTimeout(seconds, "a task's value") { try await self.value }
        } catch let timeout as TestTimeoutError {
            cancel()
            throw timeout
        }
    }
}

extension Task where Failure == Never {
    /// The task's value, waited for at most `seconds` (``scriptedWait`` by default, a bound on a hang), as
    /// ``Task/boundedValue(_:)`` for a throwing task.
    public func boundedValue(_ seconds: Double = scriptedWait) async throws -> Success {
        do {
            return try await withTestTimeout(seconds, "a task's value") { await self.value }
        } catch let timeout as TestTimeoutError {
            cancel()
            throw timeout
        }
    }
}
