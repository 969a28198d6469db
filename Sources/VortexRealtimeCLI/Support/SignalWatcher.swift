import Dispatch
import Foundation

/// Turns SIGINT and SIGTERM into an async event, so commands can close connections cleanly before exiting.
enum SignalWatcher {
    /// Returns when SIGINT or SIGTERM arrives (the default handlers are replaced while waiting).
    static func waitForTermination() async {
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
