import Foundation

/// Line output that reaches the terminal or pipe at once (stdout is block-buffered when piped, which would hold
/// events back from a consumer reading line by line).
enum StandardStreams {
    private static let lock = NSLock()

    /// Writes one line to stdout and flushes it.
    static func output(_ line: String) {
        write(line, to: FileHandle.standardOutput)
    }

    /// Writes one line to stderr.
    static func error(_ line: String) {
        write(line, to: FileHandle.standardError)
    }

    private static func write(_ line: String, to handle: FileHandle) {
        lock.lock()
        defer { lock.unlock() }
        handle.write(Data((line + "\n").utf8))
    }
}
