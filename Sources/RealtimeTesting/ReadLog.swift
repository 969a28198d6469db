/// What a test double recorded, in order, and how far the test has read it: the `next…` helpers hand each element out
/// once.
struct ReadLog<Element> {
    /// Every element recorded.
    private(set) var all: [Element] = []
    private var read = 0

    /// Records `element`.
    mutating func append(_ element: Element) { all.append(element) }

    /// The first element the test has not read yet, now read; `nil` when it has read them all.
    mutating func next() -> Element? {
        guard read < all.count else { return nil }
        defer { read += 1 }
        return all[read]
    }
}
