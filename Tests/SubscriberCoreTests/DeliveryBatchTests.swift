import Foundation
import Logging
import RealtimeTesting
import Testing

@testable import SubscriberCore

/// The readers' batched delivery: ``DeliveryBatch`` and ``StreamBuffer``.
@Suite("Batched delivery", .timeLimit(.minutes(2)))
struct DeliveryBatchTests {
    private static let logger = Logger(label: "test.batch")

    private func event(_ n: Int) -> SubscriptionEvent { .payload(RealtimePayload(json: Data("\(n)".utf8))) }

    /// Reads `stream` to its end in a task of its own, firing `arrived` once `count` events came.
    private func consume(
        _ stream: AsyncThrowingStream<SubscriptionEvent, any Error>, firing arrived: OneShotSignal<Void>, after count: Int = 1
    ) -> Task<[SubscriptionEvent], any Error> {
        Task {
            var received: [SubscriptionEvent] = []
            for try await event in stream {
                received.append(event)
                if received.count >= count { arrived.fire() }
            }
            return received
        }
    }

    @Test("events yielded into a batch are queued at once, in order, and a waiting consumer is woken by the flush")
    func batchQueuesAndFlushWakes() async throws {
        let (reader, sink) = SubscriptionSink.make(bufferLimit: 100, label: "batch", logger: Self.logger)
        let firstArrived = OneShotSignal<Void>()
        let consumer = consume(reader.elements, firing: firstArrived)
        let batch = DeliveryBatch()
        for n in 1...10 { sink.yield(event(n), into: batch) }
        batch.flush()
        try await withTestTimeout(5, "the flushed events") { _ = await firstArrived.wait() }
        sink.finish()
        #expect(try await withTestTimeout(5, "the consumer") { try await consumer.boundedValue() } == (1...10).map(event))
    }

    @Test("losses reported from many threads at once are all counted: none falls between a report and the next")
    func concurrentLossesAllCounted() async throws {
        let (reader, sink) = SubscriptionSink.make(bufferLimit: 1_000_000, label: "losses", logger: Self.logger)
        let reporters = 8
        let each = 5_000
        // Threads, not tasks: the race is between two lock acquisitions of one report, which needs real parallelism.
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<reporters {
                group.addTask {
                    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                        Thread.detachNewThread {
                            for _ in 0..<each { sink.reportLoss(count: 1, reason: .serverError) }
                            done.resume()
                        }
                    }
                }
            }
        }
        sink.finish()
        var reported = 0
        var batch: [SubscriptionEvent] = []
        while try await reader.next(into: &batch) {
            for case .lost(let loss) in batch { reported += loss.count }
        }
        #expect(reported == reporters * each)
    }

    @Test(
        "the consumer takes the whole queue at once: a full queue fits again behind what it took; beyond that the newest drop and are reported"
    )
    func consumerTakesTheQueue() async throws {
        let (reader, sink) = SubscriptionSink.make(bufferLimit: 4, label: "take", logger: Self.logger)
        for n in 1...4 { sink.yield(event(n)) }
        var iterator = reader.elements.makeAsyncIterator()
        #expect(try await iterator.next() == event(1), "takes 1...4: the queue is empty again")
        for n in 5...9 { sink.yield(event(n)) }
        for n in 2...8 { #expect(try await iterator.next() == event(n)) }
        sink.finish()
        guard case .lost(let report) = try await iterator.next() else {
            Issue.record("event 9 was dropped and must be reported")
            return
        }
        #expect(report.count == 1 && report.reason == .bufferOverflow)
        #expect(try await iterator.next() == nil)
    }

    @Test("a stream finished while its queue is full still reports what it dropped, after the queued events")
    func lossReportedAtFinishWhenFull() async throws {
        let (reader, sink) = SubscriptionSink.make(bufferLimit: 2, label: "full", logger: Self.logger)
        for n in 1...3 { sink.yield(event(n)) }
        sink.finish()
        var received: [SubscriptionEvent] = []
        for try await event in reader.elements { received.append(event) }
        #expect(received.count == 3)
        #expect(Array(received.prefix(2)) == [event(1), event(2)])
        guard case .lost(let report) = received.last else {
            Issue.record("the dropped event 3 must be reported: \(received)")
            return
        }
        #expect(report.count == 1)
    }

    @Test("a batch flushes by itself once holdLimit events are held, and a closed batch delivers at once")
    func holdLimitAndClose() async throws {
        // The buffer itself (what a sink yields into), so the test can see its consumer waiting.
        let buffer = StreamBuffer<SubscriptionEvent>(limit: 1000)
        let firstArrived = OneShotSignal<Void>()
        let consumer = consume(buffer.makeThrowingStream(), firing: firstArrived)
        // A consumer already waiting must be woken by the limit, without any explicit flush.
        try await waitUntil("the consumer to wait") { buffer.hasWaitingConsumer }
        let batch = DeliveryBatch()
        for n in 1...DeliveryBatch.holdLimit { buffer.yieldForTest(event(n), into: batch) }
        try await withTestTimeout(5, "the limit's flush") { _ = await firstArrived.wait() }
        batch.close()
        buffer.yieldForTest(event(1000), into: batch)
        buffer.finish()
        let received = try await withTestTimeout(5, "the consumer") { try await consumer.boundedValue() }
        #expect(received == (1...DeliveryBatch.holdLimit).map(event) + [event(1000)])
    }

    @Test("a batch counts held elements afresh after each flush, lists a consumer once per run, and once closed holds nothing")
    func holdCounting() {
        let first = CountingSignal()
        let second = CountingSignal()
        let batch = DeliveryBatch()
        let limit = DeliveryBatch.holdLimit
        for _ in 1..<limit { #expect(batch.hold(first)) }
        #expect(first.count == 0, "held, not woken, below the limit")
        #expect(batch.hold(first))
        #expect(first.count == 1, "the limit flushes at once, waking the consumer once")
        // The count starts again after that flush.
        #expect(batch.hold(first))
        #expect(batch.hold(second))
        #expect(batch.hold(first))
        #expect(first.count == 1 && second.count == 0)
        batch.flush()
        #expect(first.count == 3 && second.count == 1, "a consumer is listed again after another one came between")
        batch.flush()
        #expect(first.count == 3 && second.count == 1, "a flush with nothing held wakes no one")
        batch.close()
        #expect(!batch.hold(first), "a closed batch holds nothing: the caller wakes the consumer itself")
        batch.flush()
        #expect(first.count == 3)
    }

    @Test("dropping the stream, or cancelling its consumer, counts as the consumer having gone")
    func consumerGone() async throws {
        let dropped = OneShotSignal<Void>()
        let sink: SubscriptionSink
        do {
            let made = SubscriptionSink.make(bufferLimit: 4, label: "batch", logger: Self.logger)
            sink = made.sink
            sink.onConsumerGone { dropped.fire() }
        }  // the stream goes here, while the sink lives on (a dropped sink finishes the stream instead)
        #expect(dropped.isFired)
        withExtendedLifetime(sink) {}

        // Cancelled while it waits for an element (the buffer itself, so the test can see it wait).
        let cancelled = OneShotSignal<Void>()
        let buffer = StreamBuffer<SubscriptionEvent>(limit: 4)
        let stream = buffer.makeThrowingStream()
        buffer.onConsumerGone { cancelled.fire() }
        let consumer = Task { for try await _ in stream {} }
        try await waitUntil("the consumer to wait") { buffer.hasWaitingConsumer }
        consumer.cancel()
        try await withTestTimeout(5, "the cancellation") { _ = await cancelled.wait() }
        #expect(buffer.enqueue(event(1)) == .terminated)
    }

    @Test("a producer thread racing the consumer's waits hands over every element, in order (run it under TSan)")
    func producerRacesWaits() async throws {
        let count = 5_000
        let buffer = StreamBuffer<Int>(limit: count)
        let stream = buffer.makeThrowingStream()
        // One element per signal, the next only once the consumer took it: the consumer waits for nearly every element,
        // and is woken as it waits or just before (the resume racing its way to the await).
        let producer = Thread {
            for n in 0..<count {
                _ = buffer.enqueue(n)
                buffer.signal()
                // Not a bare spin: on 2 cores a spinning thread takes a whole core from every other test running beside.
                while buffer.state.withLock({ $0.count > 0 }) { usleep(20) }
            }
            buffer.finish()
        }
        producer.start()
        let received = try await withTestTimeout(60, "the consumer") {
            var received: [Int] = []
            for try await n in stream { received.append(n) }
            return received
        }
        #expect(received == Array(0..<count))
    }

    @Test("a drop-oldest buffer tells since when what it dropped was queued: the consumer's last take, or its making")
    func dropOldestTellsSinceWhen() async throws {
        let now = Locked(Date(timeIntervalSince1970: 0))
        func at(_ second: Double) { now.withLock { $0 = Date(timeIntervalSince1970: second) } }
        func instant(_ second: Double) -> Date { Date(timeIntervalSince1970: second) }
        let clock = WallClock { now.withLock { $0 } }
        let buffer = StreamBuffer<Int>(limit: 2, policy: .dropOldest, wallClock: clock)
        let stream = buffer.makeStream()
        var iterator = stream.makeAsyncIterator()
        // Never taken: 1, queued at 0 s and dropped at 60 s, reaches back to the buffer's making.
        #expect(buffer.enqueue(1) == .enqueued && buffer.enqueue(2) == .enqueued)
        at(60)
        #expect(buffer.enqueue(3) == .dropped)
        #expect(buffer.takeDroppedSince() == instant(0))
        #expect(buffer.takeDroppedSince() == nil, "told once")
        // The consumer takes the whole queue (2, 3) at 100 s: what is queued after it reaches back to that take only,
        // also while the consumer reads what it took (no take meanwhile).
        at(100)
        #expect(await iterator.next() == 2)
        at(120)
        #expect(buffer.enqueue(4) == .enqueued && buffer.enqueue(5) == .enqueued)
        at(150)
        #expect(buffer.enqueue(6) == .dropped)  // 4, queued at 120 s
        #expect(await iterator.next() == 3)
        #expect(buffer.enqueue(7) == .dropped)  // 5, queued at 120 s
        #expect(buffer.takeDroppedSince() == instant(100))
        // A dropped new element arrived at the drop: a drop-newest buffer, or one with an overflow rule, tells nothing.
        let newest = StreamBuffer<Int>(limit: 1, policy: .dropNewest, wallClock: clock)
        #expect(newest.enqueue(1) == .enqueued && newest.enqueue(2) == .dropped && newest.takeDroppedSince() == nil)
        let rule = StreamBuffer<Int>.OverflowRule(merge: { _, _ in false }, expendable: { _ in true })
        let ruled = StreamBuffer<Int>(limit: 1, policy: .dropOldest, overflowRule: rule, wallClock: clock)
        #expect(ruled.enqueue(1) == .enqueued && ruled.enqueue(2) == .dropped && ruled.takeDroppedSince() == nil)
        withExtendedLifetime(stream) {}
    }

    @Test("a waiting consumer handed one element leaves the rest queued since its empty take, not since the handoff")
    func dropOldestAfterAHandoff() async throws {
        let now = Locked(Date(timeIntervalSince1970: 200))
        func at(_ second: Double) { now.withLock { $0 = Date(timeIntervalSince1970: second) } }
        let buffer = StreamBuffer<Int>(limit: 2, policy: .dropOldest, wallClock: WallClock { now.withLock { $0 } })
        let stream = buffer.makeStream()
        at(300)
        let consumer = Task {
            var iterator = stream.makeAsyncIterator()
            return await iterator.next()
        }
        try await waitUntil("the consumer to wait") { buffer.hasWaitingConsumer }
        at(400)
        #expect(buffer.enqueue(1) == .enqueued && buffer.enqueue(2) == .enqueued)
        at(450)
        buffer.signal()  // hands 1 over; 2, queued at 400 s, stays
        #expect(try await withTestTimeout(5, "the handoff") { await consumer.value } == 1)
        at(500)
        #expect(buffer.enqueue(3) == .enqueued && buffer.enqueue(4) == .dropped)  // drops 2
        let since = try #require(buffer.takeDroppedSince())
        #expect(since <= Date(timeIntervalSince1970: 400), "2 was queued at 400 s")
        #expect(since == Date(timeIntervalSince1970: 300), "the take the consumer found empty before it waited")
        withExtendedLifetime(stream) {}
    }

    @Test("a stream finished with an error ends with it after the queued events; finishing is not the consumer going")
    func finishWithError() async throws {
        let (reader, sink) = SubscriptionSink.make(bufferLimit: 4, label: "batch", logger: Self.logger)
        let gone = Locked(false)
        sink.onConsumerGone { gone.withLock { $0 = true } }
        sink.yield(event(1))
        sink.finish(throwing: RealtimeError.disconnected)
        var iterator = reader.elements.makeAsyncIterator()
        #expect(try await iterator.next() == event(1))
        await #expect(throws: RealtimeError.self) { _ = try await iterator.next() }
        #expect(try await iterator.next() == nil)
        #expect(gone.withLock { $0 } == false)
    }

    @Test("a batch reader takes everything queued at once, in order, then waits; a forwarding pump wakes its consumer once per batch")
    func batchReaderDrainsTheQueue() async throws {
        let (upstream, source) = SubscriptionSink.make(bufferLimit: 100, label: "upstream", logger: Self.logger)
        for n in 1...5 { source.yield(event(n)) }
        var batch: [SubscriptionEvent] = []
        #expect(try await upstream.next(into: &batch))
        #expect(batch == (1...5).map(event), "the whole queue in one read")
        // Nothing queued: the next read waits for the next element (the cancellation test sees it wait), and takes it.
        let reading = Task {
            var batch: [SubscriptionEvent] = []
            let more = try await upstream.next(into: &batch)
            return (more, batch)
        }
        source.yield(event(6))
        let (more, waited) = try await withTestTimeout(5, "the waiting read") { try await reading.boundedValue() }
        #expect(more && waited == [event(6)])

        // The pump's pattern: deliver a read's events with one batch, flush after the lot.
        let (downstream, sink) = SubscriptionSink.make(bufferLimit: 100, label: "downstream", logger: Self.logger)
        let delivered = OneShotSignal<Void>()
        let consumer = consume(downstream.elements, firing: delivered, after: 3)
        for n in 7...9 { source.yield(event(n)) }
        let pumpBatch = DeliveryBatch()
        #expect(try await upstream.next(into: &batch))
        for event in batch { sink.yield(event, into: pumpBatch) }
        pumpBatch.flush()
        try await withTestTimeout(5, "the consumer to be woken by the pump's flush") { _ = await delivered.wait() }
        source.finish(throwing: RealtimeError.disconnected)
        await #expect(throws: RealtimeError.self) { _ = try await upstream.next(into: &batch) }
        #expect(try await upstream.next(into: &batch) == false && batch.isEmpty)
        sink.finish()
        #expect(try await withTestTimeout(5, "the consumer") { try await consumer.boundedValue() } == (7...9).map(event))
    }

    // A dropped reader: `consumerGone()` above (what `SubscriptionSink.make` returns is the reader).
    @Test("a batch reader cancelled while it waits counts as the consumer having gone")
    func batchReaderGone() async throws {
        let cancelled = OneShotSignal<Void>()
        let buffer = StreamBuffer<SubscriptionEvent>(limit: 4)
        let reader = buffer.makeReader()
        buffer.onConsumerGone { cancelled.fire() }
        let consumer = Task {
            var batch: [SubscriptionEvent] = []
            return try await reader.next(into: &batch)
        }
        try await waitUntil("the reader to wait") { buffer.hasWaitingConsumer }
        consumer.cancel()
        try await withTestTimeout(5, "the cancellation") { _ = await cancelled.wait() }
        #expect(try await consumer.boundedValue() == false)
        #expect(buffer.enqueue(event(1)) == .terminated)
    }

    @Test("a failed subscription's reader ends at once with its error")
    func failedReader() async throws {
        let reader = BatchReader<SubscriptionEvent>.failed(.unsupported("test"))
        var batch: [SubscriptionEvent] = []
        await #expect(throws: RealtimeError.unsupported("test")) { _ = try await reader.next(into: &batch) }
    }
}

extension StreamBuffer {
    /// Whether the consumer is suspended in `next()`, waiting for an element.
    fileprivate var hasWaitingConsumer: Bool { state.withLock { $0.waiter != nil } }

    /// What a sink's `yield` does: queue, then wake the consumer or leave that to the reader's batch.
    fileprivate func yieldForTest(_ element: Element, into batch: DeliveryBatch) {
        _ = enqueue(element)
        signal(in: batch)
    }
}

/// A consumer's wake-up that only counts how often it is called.
private final class CountingSignal: DeliverySignal {
    private let calls = Locked(0)
    var count: Int { calls.withLock { $0 } }
    func signal() { calls.withLock { $0 += 1 } }
}
