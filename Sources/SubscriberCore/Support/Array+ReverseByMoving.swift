extension Array {
    /// Reverses the elements by moving them, never copying: `reverse()` on an array swaps through copies, a retain and
    /// a release per reference an element holds (for a decoded event, one per string), where the buffer's
    /// `swapAt` moves bits. Read-by-`popLast()` queues reverse every batch they take.
    @inlinable
    package mutating func reverseByMoving() {
        withUnsafeMutableBufferPointer { $0.reverse() }
    }
}
