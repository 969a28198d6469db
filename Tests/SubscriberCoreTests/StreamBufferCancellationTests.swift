import Foundation
import RealtimeTesting
import Testing

@testable import SubscriberCore

/// A producer waking the consumer while the consumer's task is cancelled: the resume takes the task's status lock, and
/// the cancellation holds that lock while its handler takes the buffer's. The soak found them deadlocked when the resume
/// happened under the buffer's lock.
@Suite("StreamBuffer: signal against cancel")
struct StreamBufferCancellationTests {
    @Test("a producer signalling on another thread while the consumer is cancelled never deadlocks (500 rounds)")
    func signalRacesCancellation() async throws {
        try await withTestTimeout(60, "500 rounds of signals against a cancellation") {
            for round in 0..<500 {
                let buffer = StreamBuffer<Int>(limit: 16)
                let stream = buffer.makeStream()
                let consumer = Task { for await _ in stream {} }
                let stop = Locked(false)
                // The producer wakes the consumer over and over on its own thread, so a resume is under way when the
                // cancellation comes.
                async let produced: Void = onOwnThread {
                    while !stop.withLock({ $0 }) {
                        _ = buffer.enqueue(round)
                        buffer.signal()
                    }
                }
                for _ in 0..<(round % 50) { await Task.yield() }
                consumer.cancel()
                await consumer.value
                stop.withLock { $0 = true }
                try await produced
            }
        }
    }
}
