import Foundation

/// The text of the file at `url` (invalid UTF-8 repaired), or `""` when it is missing, empty or unreadable: for the
/// output files of a test's peer processes, which are often still empty when read.
///
/// Read through `FileHandle`, not `String(contentsOf:)` or `Data(contentsOf:)`: on Linux, swift-foundation reads a file
/// whose size is 0 into a 4 KB buffer it never frees when nothing was read, and a test polling an empty output file
/// leaks that buffer on every poll (LeakSanitizer found hundreds).
public func readTextFile(_ url: URL) -> String {
    guard let handle = try? FileHandle(forReadingFrom: url) else { return "" }
    defer { try? handle.close() }
    guard let data = try? handle.readToEnd() else { return "" }
    return String(decoding: data, as: UTF8.self)
}
