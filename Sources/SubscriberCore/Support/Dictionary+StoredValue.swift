extension Dictionary {
    /// Runs `body` on the value for `key` where it is stored (through the subscript's `_modify` accessor); `nil` when
    /// there is none. For the per-event paths that read a few fields of a large record: reading the record out would
    /// copy it, retaining and releasing every reference it holds.
    @inlinable
    package mutating func withStoredValue<R>(forKey key: Key, _ body: (inout Value) -> R) -> R? {
        func apply(_ slot: inout Value?) -> R? {
            guard slot != nil else { return nil }
            return body(&slot!)
        }
        return apply(&self[key])
    }
}
