import Foundation
import SubscriberCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Line output that reaches the terminal or pipe at once (stdout is block-buffered when piped, which would hold
/// events back from a consumer reading line by line), and that survives a reader going away.
///
/// Writes go straight to the file descriptors with `write(2)`. SIGPIPE is ignored (``prepare()``), so a closed
/// stdout (`vortex-realtime tail … | head -1`) shows up as `EPIPE` instead of killing the process, and
/// `FileHandle.write`'s `try!` (a crash with a backtrace on `EPIPE`) is never used. A closed stdout ends the command
/// quietly: a command waiting in ``SignalWatcher/waitForTermination()`` shuts down as on SIGTERM (closing its
/// connections) and exits 0; any other command exits 0 at once. Later output is dropped. A closed stderr is ignored.
enum StandardStreams {
    private struct State {
        var outputClosed = false
        var nextWaiter = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    }

    private static let lock = NSLock()
    private static let state = Locked(State())

    /// Ignores SIGPIPE for the whole process; call first thing in `main`.
    static func prepare() {
        signal(SIGPIPE, SIG_IGN)
    }

    /// Writes one line to stdout. When stdout is closed, ends the command quietly (see the type's documentation).
    static func output(_ line: String) {
        guard !state.withLock({ $0.outputClosed }) else { return }
        if writeLine(line, to: STDOUT_FILENO) == EPIPE { outputDidClose() }
    }

    /// Writes one line to stderr; a failure is ignored (there is nowhere left to report it).
    static func error(_ line: String) {
        _ = writeLine(line, to: STDERR_FILENO)
    }

    /// Returns once stdout has been found closed; returns at once when it already has been, and when the calling
    /// task is cancelled.
    static func outputClosed() async {
        let id = state.withLock { state -> Int in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.outputClosed || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }

    private static func outputDidClose() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard !state.outputClosed else { return [] }
            state.outputClosed = true
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        // Nobody waits to shut down cleanly: stop here, quietly, as a filter whose reader has gone.
        guard !waiters.isEmpty else { _exit(0) }
        for waiter in waiters { waiter.resume() }
    }

    /// Writes `line` and a newline completely; returns 0 on success or the `errno` that stopped it.
    private static func writeLine(_ line: String, to descriptor: Int32) -> Int32 {
        lock.lock()
        defer { lock.unlock() }
        let bytes = Array((line + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { buffer in
                write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            }
            if written >= 0 {
                offset += written
                continue
            }
            let code = errno
            if code == EINTR { continue }
            return code
        }
        return 0
    }
}
