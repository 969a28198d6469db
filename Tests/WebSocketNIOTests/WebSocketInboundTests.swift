import Foundation
import RealtimeTesting
import SubscriberCore
import Testing

@testable import WebSocketNIO

/// The queue between NIO's event loop and the link's reader: whatever the interleaving, reading that a full queue
/// paused is turned back on once the reader has taken what was queued.
@Suite("WebSocketInbound backpressure")
struct WebSocketInboundTests {
    @Test("a reader cancelled as it starts to wait always ends at once, never waiting for a frame that does not come")
    func cancelledReaderEnds() async throws {
        let inbound = WebSocketInbound()
        // The cancellation lands anywhere in the reader's start: before its first look, between that look and storing
        // its waiter (where it was once lost), or while it waits.
        for round in 0..<3_000 {
            let reader = Task { try await inbound.next() }
            if round % 3 == 1 { await Task.yield() }
            reader.cancel()
            let outcome = try await withTestTimeout(10, "cancelled reader \(round)") { await reader.result }
            #expect(throws: CancellationError.self) { try outcome.get() }
        }
    }

    @Test("a reader racing full reads never leaves reading paused", arguments: [WebSocketInbound.highWatermark + 44, 1])
    func pausedReadingAlwaysResumes(batchSize: Int) async throws {
        let reads = 10_000
        let inbound = WebSocketInbound()
        let loop = FakeEventLoop()
        inbound.onResumeReading { loop.resume() }
        let message = WebSocketMessage.text("{}")
        // The "event loop": a thread of its own, so queueing truly races the reader's two looks at the queue.
        let thread = Thread {
            loop.run(reads: reads) { inbound.append(Array(repeating: message, count: batchSize)) }
            inbound.finish()
        }
        thread.start()

        // A paused queue nobody resumes hangs the reader; give up rather than hang the suite.
        let received = try await withThrowingTaskGroup(of: Int?.self) { group in
            group.addTask {
                var count = 0
                while let batch = try await inbound.next() { count += batch.count }
                return count
            }
            group.addTask {
                try await Task.sleep(for: TestTime.scaled(.seconds(30)))  // 3 million messages: slow under a sanitizer
                return nil
            }
            let first = try await group.next() ?? nil
            loop.release()
            group.cancelAll()
            return first
        }
        #expect(received == reads * batchSize, "reading stayed paused after \(loop.pauses) pauses")
        #expect(loop.pauses > 0 || batchSize < WebSocketInbound.highWatermark)
    }

    @Test("a reader taking one message at a time turns reading back on only once the queue is under the line")
    func oneAtATimeResumesUnderTheLine() async throws {
        let inbound = WebSocketInbound()
        let resumes = Locked(0)
        inbound.onResumeReading { resumes.withLock { $0 += 1 } }
        #expect(inbound.append(Array(repeating: .text("{}"), count: WebSocketInbound.highWatermark + 1)))
        // 256 left: still full, so no read may come in (one per message taken would grow the queue without bound).
        _ = try await inbound.nextOne()
        #expect(resumes.withLock { $0 } == 0)
        #expect(inbound.backlog == (WebSocketInbound.highWatermark, 2 * WebSocketInbound.highWatermark, true))
        _ = try await inbound.nextOne()
        #expect(resumes.withLock { $0 } == 1)
        #expect(inbound.backlog.paused == false)
    }

    @Test("a one-message reader waiting as a full read lands takes one; the rest stays queued and reading pauses")
    func waitingReaderLeavesAFullQueue() async throws {
        let inbound = WebSocketInbound()
        let reader = Task { try await inbound.nextOne() }
        try await waitUntil("the reader to wait", timeout: 10) { inbound.isAwaited }
        #expect(inbound.append(Array(repeating: .text("{}"), count: WebSocketInbound.highWatermark + 1)))
        #expect(try await reader.value == .text("{}"))
        #expect(inbound.backlog == (WebSocketInbound.highWatermark, 2 * WebSocketInbound.highWatermark, true))
    }

    @Test("the queue's bytes count toward the pause: payload bytes (UTF-8), added, taken one and all")
    func bytesCountTowardThePause() async throws {
        let inbound = WebSocketInbound()
        let resumes = Locked(0)
        inbound.onResumeReading { resumes.withLock { $0 += 1 } }
        let mebibyte = WebSocketMessage.binary(Data(count: 1 << 20))
        let twoMebibytes = WebSocketMessage.text(String(repeating: "é", count: 1 << 20))  // 2 bytes a character
        #expect(!inbound.append([mebibyte, mebibyte]))
        #expect(inbound.append([twoMebibytes]))
        #expect(inbound.backlog == (3, WebSocketInbound.highWatermarkBytes, true))
        // One taken: 3 MiB left, under the line, so reading resumes; what comes next is counted from there.
        #expect(try await inbound.nextOne() == mebibyte)
        #expect(resumes.withLock { $0 } == 1)
        #expect(!inbound.append([.binary(Data(count: 512 * 1024))]))
        #expect(inbound.backlog.bytes == 3 * (1 << 20) + 512 * 1024)
        #expect(try await inbound.next()?.count == 3)
        #expect(inbound.backlog == (0, 0, false))
    }
}

/// Plays NIO's `autoRead`: the thread that appends turns reading off itself when `append` says so, and a resume is
/// posted to it, taking effect only after the step it interrupts (as `eventLoop.execute` would).
private final class FakeEventLoop: @unchecked Sendable {
    private let condition = NSCondition()
    private var posted = 0
    private var released = false
    private var pauseCount = 0

    var pauses: Int {
        condition.lock()
        defer { condition.unlock() }
        return pauseCount
    }

    /// The event loop's side: one read's worth at a time, while reading is on.
    func run(reads: Int, _ read: () -> Bool) {
        var reading = true
        for _ in 0..<reads {
            if !reading {
                waitForPost()
                reading = true
            }
            if read() {
                reading = false
                condition.lock()
                pauseCount += 1
                condition.unlock()
            }
        }
    }

    /// The reader's side: turns reading back on.
    func resume() {
        condition.lock()
        posted += 1
        condition.broadcast()
        condition.unlock()
    }

    /// Reading on for good, so the thread ends even when the queue under test failed to resume it.
    func release() {
        condition.lock()
        released = true
        condition.broadcast()
        condition.unlock()
    }

    private func waitForPost() {
        condition.lock()
        while posted == 0 && !released { condition.wait() }
        if posted > 0 { posted -= 1 }
        condition.unlock()
    }
}
