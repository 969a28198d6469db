/// The string of the last key read out of a frame (a subscription id), reused while the next frames carry the same
/// bytes: consecutive events mostly belong to one subscription, and an id longer than 15 bytes would otherwise cost a
/// string allocation per event.
package struct RecentKey: Sendable {
    private var last: String?

    /// No key read yet.
    package init() {}

    /// The key whose UTF-8 is `bytes`: the last one if it matches, else a new string, kept for the next frame.
    package mutating func string(for bytes: UnsafeBufferPointer<UInt8>) -> String {
        if let last, last.utf8.withContiguousStorageIfAvailable({ JSONEnvelope.bytes(0..<bytes.count, in: bytes, equal: $0) }) == true {
            return last
        }
        let key = String(decoding: bytes, as: UTF8.self)
        last = key
        return key
    }
}
