/// The callers of the notifier's operations (identity updates, switches, resumptions), each waiting until the state
/// machine says its operation has taken effect, or why it could not.
struct OperationWaiters {
    private var waiting: [Int: CheckedContinuation<Void, any Error>] = [:]
    private var lastID = 0

    /// The operations whose callers are waiting.
    var count: Int { waiting.count }

    /// A new operation id.
    mutating func next() -> Int {
        lastID += 1
        return lastID
    }

    /// `operation`'s caller waits on `continuation`.
    mutating func add(_ operation: Int, _ continuation: CheckedContinuation<Void, any Error>) {
        waiting[operation] = continuation
    }

    /// `operation`'s caller returns.
    mutating func complete(_ operation: Int) { waiting.removeValue(forKey: operation)?.resume() }

    /// `operation`'s caller throws `error`.
    mutating func fail(_ operation: Int, _ error: any Error) { waiting.removeValue(forKey: operation)?.resume(throwing: error) }
}
