import Foundation
import Logging
import RealtimeTesting
import Testing

@testable import SubscriberCore

/// The reader's batched delivery: ``DeliveryBatch``, ``StreamBuffer`` and ``BatchingExecutor``.
@Suite("Batched delivery")
struct DeliveryBatchTests {
    private static let logger = Logger(label: "test.batch")

    private func event(_ n: Int) -> SubscriptionEvent { .payload(RealtimePayload(json: Data("\(n)".utf8))) }

    @Test("events yielded under a batch are queued at once, in order, and a waiting consumer is woken by the flush")
    func batchQueuesAndFlushWakes() async throws {
        let (stream, sink) = SubscriptionSink.make(bufferLimit: 100, label: "batch", logger: Self.logger)
        let received = Locked<[SubscriptionEvent]>([])
        let firstArrived = OneShotSignal<Void>()
        let consumer = Task {
            for try await event in stream {
                received.withLock { $0.append(event) }
                firstArrived.fire()
            }
        }
        let batch = DeliveryBatch()
        DeliveryBatch.$current.withValue(batch) {
            for n in 1...10 { sink.yield(event(n)) }
        }
        batch.flush()
        try await withTestTimeout(5, "the flushed events") { _ = await firstArrived.wait() }
        sink.finish()
        _ = try await withTestTimeout(5, "the consumer") { try await consumer.value }
        #expect(received.withLock { $0 } == (1...10).map(event))
    }

    @Test("a batch flushes by itself once holdLimit events are held, and a closed batch delivers at once")
    func holdLimitAndClose() async throws {
        let (stream, sink) = SubscriptionSink.make(bufferLimit: 1000, label: "batch", logger: Self.logger)
        let received = Locked<[SubscriptionEvent]>([])
        let firstArrived = OneShotSignal<Void>()
        // A consumer already waiting must be woken by the limit, without any explicit flush.
        let consumer = Task {
            for try await event in stream {
                received.withLock { $0.append(event) }
                firstArrived.fire()
            }
        }
        try await Task.sleep(for: .milliseconds(20))
        let batch = DeliveryBatch()
        DeliveryBatch.$current.withValue(batch) {
            for n in 1...DeliveryBatch.holdLimit { sink.yield(event(n)) }
        }
        try await withTestTimeout(5, "the limit's flush") { _ = await firstArrived.wait() }
        batch.close()
        DeliveryBatch.$current.withValue(batch) { sink.yield(event(1000)) }
        sink.finish()
        _ = try await withTestTimeout(5, "the consumer") { try await consumer.value }
        #expect(received.withLock { $0 } == (1...DeliveryBatch.holdLimit).map(event) + [event(1000)])
    }

    @Test("dropping the stream, or cancelling its consumer, counts as the consumer having gone")
    func consumerGone() async throws {
        let dropped = OneShotSignal<Void>()
        do {
            let (stream, sink) = SubscriptionSink.make(bufferLimit: 4, label: "batch", logger: Self.logger)
            sink.onConsumerGone { dropped.fire() }
            _ = stream
        }
        #expect(dropped.isFired)

        let cancelled = OneShotSignal<Void>()
        let (stream, sink) = SubscriptionSink.make(bufferLimit: 4, label: "batch", logger: Self.logger)
        sink.onConsumerGone { cancelled.fire() }
        let consumer = Task { for try await _ in stream {} }
        try await Task.sleep(for: .milliseconds(20))
        consumer.cancel()
        try await withTestTimeout(5, "the cancellation") { _ = await cancelled.wait() }
        #expect(sink.yield(event(1)) == false)
    }

    @Test("a stream finished with an error ends with it after the queued events; finishing is not the consumer going")
    func finishWithError() async throws {
        let (stream, sink) = SubscriptionSink.make(bufferLimit: 4, label: "batch", logger: Self.logger)
        let gone = Locked(false)
        sink.onConsumerGone { gone.withLock { $0 = true } }
        sink.yield(event(1))
        sink.finish(throwing: RealtimeError.disconnected)
        var iterator = stream.makeAsyncIterator()
        #expect(try await iterator.next() == event(1))
        await #expect(throws: RealtimeError.self) { _ = try await iterator.next() }
        #expect(try await iterator.next() == nil)
        #expect(gone.withLock { $0 } == false)
    }

    @Test("the batching executor wakes a reader's consumers when the reader suspends, without an explicit flush")
    func batchingExecutorFlushesOnSuspension() async throws {
        guard #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *) else { return }
        let executor = BatchingExecutor(name: "test.reader")
        let (stream, sink) = SubscriptionSink.make(bufferLimit: 100, label: "batch", logger: Self.logger)
        let delivered = OneShotSignal<Void>()
        let consumer = Task {
            var received: [SubscriptionEvent] = []
            for try await event in stream {
                received.append(event)
                if received.count == 2 { delivered.fire() }
            }
            return received
        }
        try await withTestTimeout(5, "the consumer to be woken by the reader's suspension") {
            await executor.run {
                // Held by the reader's batch, never flushed explicitly: only the suspension below can wake the consumer.
                sink.yield(event(1))
                sink.yield(event(2))
                _ = await delivered.wait()
            }
        }
        sink.finish()
        executor.stop()
        #expect(try await withTestTimeout(5, "the consumer") { try await consumer.value } == [event(1), event(2)])
    }
}
