import Dispatch
import Foundation
import SubscriberCore

/// Turns SIGINT and SIGTERM — and a closed stdout — into an async event, so commands can close connections cleanly
/// before exiting.
///
/// A command arms it (``arm()``) before it starts the work that a signal should stop. Arming turns the signals' default
/// action off and waits until the system delivers them to the watcher's sources: a signal sent in between would be
/// lost, so one sent because of the command's output (a test that reads the first line, then sends SIGTERM) must find
/// the watcher armed. Found by the soak: `tail` printed its first line before its watcher was registered, and the
/// SIGTERM that followed was dropped; the command ran on for ever.
final class SignalWatcher: Sendable {
    /// Cancelled when the watcher goes (Dispatch's sources are not `Sendable`: kept under a lock).
    private let sources: Locked<[any DispatchSourceSignal]>
    private let received: AsyncStream<Int32>
    private let continuation: AsyncStream<Int32>.Continuation

    private init(sources: [any DispatchSourceSignal], received: AsyncStream<Int32>, continuation: AsyncStream<Int32>.Continuation) {
        self.sources = Locked(sources)
        self.received = received
        self.continuation = continuation
    }

    /// Replaces the default handlers of SIGINT and SIGTERM with dispatch sources, and returns once both are registered:
    /// from then on neither signal is lost.
    static func arm() async -> SignalWatcher {
        let signals = [SIGINT, SIGTERM]
        for signalNumber in signals { signal(signalNumber, SIG_IGN) }
        let (received, continuation) = AsyncStream<Int32>.makeStream()
        let (registered, registration) = AsyncStream<Void>.makeStream()
        let sources = signals.map { signalNumber in
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler { continuation.yield(signalNumber) }
            source.setRegistrationHandler { registration.yield() }
            source.resume()
            return source
        }
        var count = 0
        for await _ in registered {
            count += 1
            if count == sources.count { break }
        }
        return SignalWatcher(sources: sources, received: received, continuation: continuation)
    }

    deinit {
        sources.withLock { $0.forEach { $0.cancel() } }
    }

    /// Returns when SIGINT or SIGTERM arrived since ``arm()``, or when stdout is found closed
    /// (``StandardStreams/outputClosed()``: nobody reads the command's output any more), or when cancelled.
    func waitForTermination() async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.waitForSignal() }
            group.addTask { await StandardStreams.outputClosed() }
            await group.next()
            group.cancelAll()
        }
    }

    private func waitForSignal() async {
        let continuation = continuation
        await withTaskCancellationHandler {
            for await _ in received { return }
        } onCancel: {
            continuation.finish()
        }
    }
}
