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
        // The vocabulary's spellings are literals: their bytes are read in place, nothing is copied.
        return spelling.withUTF8 { memcmp($0.baseAddress!, base, count) == 0 }
    }
}
