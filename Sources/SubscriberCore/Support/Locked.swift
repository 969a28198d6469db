import Foundation

/// A value guarded by a lock, for state reached synchronously from any task or thread (the engine's state, sinks,
/// signals). Package-internal: not part of the public API.
///
/// It sits on the per-event path, so it is inlinable (callers in other modules get specialised code, without runtime
/// generic metadata lookups) and keeps the value behind a pointer (no dynamic exclusivity check per access; the lock
/// is what guarantees exclusivity).
@usableFromInline package final class Locked<Value>: @unchecked Sendable {
    @usableFromInline let lock = NSLock()
    @usableFromInline let storage: UnsafeMutablePointer<Value>

    /// Creates the box holding `value`.
    @inlinable
    package init(_ value: Value) {
        storage = UnsafeMutablePointer<Value>.allocate(capacity: 1)
        storage.initialize(to: value)
    }

    @inlinable
    deinit {
        storage.deinitialize(count: 1)
        storage.deallocate()
    }

    /// Runs `body` with exclusive access to the value.
    @inlinable
    package func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&storage.pointee)
    }
}
