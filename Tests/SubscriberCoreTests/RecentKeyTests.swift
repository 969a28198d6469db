import Testing

@testable import SubscriberCore

@Suite("RecentKey")
struct RecentKeyTests {
    @Test("gives the string of the bytes it is handed, reusing the last one only when the bytes are the same")
    func keys() {
        var recent = RecentKey()
        func key(_ text: String) -> String { Array(text.utf8).withUnsafeBufferPointer { recent.string(for: $0) } }
        for text in ["op-1", "op-1", "op-2", "op-1", "", "", "op-10", "op-1", "é-1"] {
            #expect(key(text) == text)
        }
    }
}
