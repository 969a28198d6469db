#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension UnsafeBufferPointer<UInt8> {
    /// Whether these bytes are exactly `spelling`'s UTF-8, compared with `memcmp`: decoding asks this of every key and
    /// every `eventType`, where the generic `elementsEqual` loop cost more than the rest of the lookup.
    package func spells(_ spelling: String) -> Bool {
        var spelling = spelling
        guard spelling.utf8.count == count else { return false }
        guard let base = baseAddress, count > 0 else { return true }
        // Read in place for literals longer than 15 bytes (the event types); a shorter string is copied out first, which
        // is why the device keys compare with their `StaticString` spelling instead.
        return spelling.withUTF8 { memcmp($0.baseAddress!, base, count) == 0 }
    }

    /// Whether these bytes are exactly `spelling`'s, compared a word at a time: the device keys are short, and
    /// making their bytes from a `String` cost four times the rest of the lookup.
    package func spells(_ spelling: StaticString) -> Bool {
        spelling.withUTF8Buffer { theirs in
            guard theirs.count == count else { return false }
            guard let mine = baseAddress.map(UnsafeRawPointer.init), let other = theirs.baseAddress.map(UnsafeRawPointer.init) else {
                return true
            }
            // Two overlapping loads cover 8...16 bytes (4...8 with half words); every load stays inside both spellings.
            func same<Word: FixedWidthInteger>(_: Word.Type, at offset: Int) -> Bool {
                mine.loadUnaligned(fromByteOffset: offset, as: Word.self) == other.loadUnaligned(fromByteOffset: offset, as: Word.self)
            }
            switch count {
            case 8...16: return same(UInt64.self, at: 0) && same(UInt64.self, at: count - 8)
            case 4..<8: return same(UInt32.self, at: 0) && same(UInt32.self, at: count - 4)
            case 1..<4: return (0..<count).allSatisfy { same(UInt8.self, at: $0) }
            default: return memcmp(other, mine, count) == 0
            }
        }
    }
}
