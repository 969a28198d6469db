import Dispatch
import Foundation

/// Turns SIGINT and SIGTERM — and a closed stdout — into an async event, so commands can close connections cleanly
/// before exiting.
enum SignalWatcher {
    /// Returns when SIGINT or SIGTERM arrives (the default handlers are replaced while waiting), or when stdout is
    /// found closed (``StandardStreams/outputClosed()``: nobody reads the command's output any more).
    static func waitForTermination() async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await waitForSignal() }
            group.addTask { await StandardStreams.outputClosed() }
            await group.next()
            group.cancelAll()
        }
    }

    private static func waitForSignal() async {
        let signals = [SIGINT, SIGTERM]
        for signalNumber in signals { signal(signalNumber, SIG_IGN) }
        let (stream, continuation) = AsyncStream<Int32>.makeStream()
        let sources = signals.map { signalNumber in
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler { continuation.yield(signalNumber) }
            source.resume()
            return source
        }
        defer { sources.forEach { $0.cancel() } }
        await withTaskCancellationHandler {
            for await _ in stream { return }
        } onCancel: {
            continuation.finish()
        }
    }
}
