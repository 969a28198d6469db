import Foundation
import Logging
import RealtimeTesting
import Testing

@testable import SubscriberCore

/// Reads `stream` to its end, failing instead of hanging when it does not end.
private func collect<Element: Sendable>(_ stream: AsyncStream<Element>, seconds: Double = 5) async throws -> [Element] {
    try await withTestTimeout(seconds, "the stream to end") {
        var elements: [Element] = []
        for await element in stream { elements.append(element) }
        return elements
    }
}

/// A payload event whose JSON is the number `n`.
private func event(_ n: Int) -> SubscriptionEvent { .payload(RealtimePayload(json: Data("\(n)".utf8))) }

// MARK: - ConnectionStateBroadcaster

@Suite("ConnectionStateBroadcaster")
struct ConnectionStateBroadcasterTests {
    @Test func newObserverFirstGetsTheCurrentState() async throws {
        let broadcaster = ConnectionStateBroadcaster()
        #expect(broadcaster.current == .idle)
        let first = broadcaster.makeStream()
        broadcaster.update(.connecting)
        broadcaster.update(.connected)
        #expect(broadcaster.current == .connected)
        let late = broadcaster.makeStream()
        broadcaster.finish()
        #expect(try await collect(first) == [.idle, .connecting, .connected])
        #expect(try await collect(late) == [.connected])
    }

    @Test func updatesReachEveryObserver() async throws {
        let broadcaster = ConnectionStateBroadcaster()
        let streams = (0..<3).map { _ in broadcaster.makeStream() }
        let states: [ConnectionState] = [
            .connecting, .connected, .reconnecting(attempt: 1, delay: .seconds(10)),
            .reconnecting(attempt: 2, delay: .seconds(10)), .disconnected(.requested),
        ]
        for state in states { broadcaster.update(state) }
        broadcaster.finish()
        for stream in streams {
            #expect(try await collect(stream) == [.idle] + states)
        }
    }

    @Test func identicalConsecutiveStatesAreNotRepeated() async throws {
        let broadcaster = ConnectionStateBroadcaster()
        let stream = broadcaster.makeStream()
        for state: ConnectionState in [
            .idle, .connecting, .connecting, .connecting, .connected, .connected,
            .reconnecting(attempt: 1, delay: .seconds(1)), .reconnecting(attempt: 1, delay: .seconds(1)),
            .reconnecting(attempt: 1, delay: .seconds(2)), .connecting,
        ] {
            broadcaster.update(state)
        }
        broadcaster.finish()
        #expect(
            try await collect(stream) == [
                .idle, .connecting, .connected, .reconnecting(attempt: 1, delay: .seconds(1)),
                .reconnecting(attempt: 1, delay: .seconds(2)), .connecting,
            ])
    }

    @Test func finishEndsAWaitingObserver() async throws {
        let broadcaster = ConnectionStateBroadcaster()
        let stream = broadcaster.makeStream()
        let initialRead = OneShotSignal<Void>()
        let reader = Task {
            try await withTestTimeout(5, "the stream to end") {
                var elements: [ConnectionState] = []
                for await element in stream {
                    elements.append(element)
                    initialRead.fire()
                }
                return elements
            }
        }
        // The reader has taken the initial state and goes on to wait for more: the update and the finish find it so.
        try await withTestTimeout(5, "the reader to take the initial state") { _ = await initialRead.wait() }
        broadcaster.update(.connecting)
        broadcaster.finish()
        #expect(try await reader.boundedValue() == [.idle, .connecting])
        // Updates after finish reach nobody but still move the current state.
        broadcaster.update(.connected)
        #expect(broadcaster.current == .connected)
    }

    @Test func slowObserversKeepTheNewest64States() async throws {
        let broadcaster = ConnectionStateBroadcaster()
        let stream = broadcaster.makeStream()
        for attempt in 1...100 { broadcaster.update(.reconnecting(attempt: attempt, delay: .seconds(1))) }
        broadcaster.finish()
        let received = try await collect(stream)
        #expect(received == (37...100).map { .reconnecting(attempt: $0, delay: .seconds(1)) })
    }

    @Test func aBroadcasterNobodyHoldsEndsItsStreams() async throws {
        var broadcaster: ConnectionStateBroadcaster? = ConnectionStateBroadcaster()
        let stream = broadcaster?.makeStream()
        broadcaster?.update(.connecting)
        broadcaster = nil
        #expect(try await collect(try #require(stream)) == [.idle, .connecting])
    }

    @Test func cancelledObserverDoesNotBlockOthers() async throws {
        let broadcaster = ConnectionStateBroadcaster()
        let cancelled = Task { for await _ in broadcaster.makeStream() {} }
        cancelled.cancel()
        try await cancelled.boundedValue()
        let stream = broadcaster.makeStream()
        broadcaster.update(.connecting)
        broadcaster.finish()
        #expect(try await collect(stream) == [.idle, .connecting])
    }
}

// MARK: - DrivenNetworkPathMonitor

@Suite("DrivenNetworkPathMonitor")
struct DrivenNetworkPathMonitorTests {
    @Test func anUnknownPathIsNotReportedUntilTheFirstUpdate() async throws {
        let monitor = DrivenNetworkPathMonitor(nil)
        #expect(monitor.current == nil)
        let early = monitor.paths()
        monitor.update(.unsatisfied)
        monitor.update(.unsatisfied)
        monitor.update(.satisfied(.wifi))
        #expect(monitor.current == .satisfied(.wifi))
        monitor.finish()
        #expect(try await collect(early) == [.unsatisfied, .satisfied(.wifi)])
    }

    /// A supervisor that asks for paths while its monitor is being shut down must not wait for ever.
    @Test func aStreamAskedForAfterFinishGivesTheLastPathAndEnds() async throws {
        let monitor = DrivenNetworkPathMonitor()
        monitor.finish()
        #expect(try await collect(monitor.paths()) == [.satisfied(.other)])
        let unknown = DrivenNetworkPathMonitor(nil)
        unknown.finish()
        #expect(try await collect(unknown.paths()) == [])
    }
}

// MARK: - SubscriptionSink

@Suite("SubscriptionSink")
struct SubscriptionSinkTests {
    private static let logger = Logger(label: "test.sink")

    /// Reads a subscription stream to its end.
    private func drain(_ stream: AsyncThrowingStream<SubscriptionEvent, any Error>) async throws -> [SubscriptionEvent] {
        try await withTestTimeout(5, "the subscription stream to end") {
            var events: [SubscriptionEvent] = []
            for try await event in stream { events.append(event) }
            return events
        }
    }

    private static let wall = WallClock { Date(timeIntervalSince1970: 1_700_000_000) }

    @Test(
        "a full buffer keeps the oldest events, drops the newest and reports them in the stream",
        arguments: [
            // (limit, yielded, kept, lost)
            (2, 5, [1, 2], 3),
            (3, 10, [1, 2, 3], 7),
            (1, 4, [1], 3),
            (0, 4, [1], 3),
        ])
    func bufferLimit(limit: Int, yielded: Int, kept: [Int], lost: Int) async throws {
        let (stream, sink) = SubscriptionSink.makeStream(
            bufferLimit: limit, label: "default/test", logger: Self.logger, wallClock: Self.wall, margin: .seconds(2))
        var iterator = stream.makeAsyncIterator()
        for n in 1...yielded { #expect(sink.yield(event(n)) == true) }
        // Reading frees room: the loss report takes its place behind the kept events, before anything newer.
        var received: [SubscriptionEvent] = []
        for _ in kept { received.append(try #require(try await iterator.next())) }
        #expect(received == kept.map(event))
        #expect(sink.yield(event(100)) == true)
        let report = try #require(try await iterator.next())
        guard case .lost(let loss) = report else {
            Issue.record("expected a loss report, got \(report)")
            return
        }
        #expect(loss.count == lost)
        #expect(loss.reason == .bufferOverflow)
        #expect(loss.window.start == Date(timeIntervalSince1970: 1_700_000_000 - 2))
        sink.finish()
        var rest: [SubscriptionEvent] = []
        while let next = try await iterator.next() { rest.append(next) }
        if limit > 1 { #expect(rest == [event(100)]) }
    }

    @Test("nothing is lost when the consumer keeps up")
    func noLossWithinTheLimit() async throws {
        let (stream, sink) = SubscriptionSink.makeStream(bufferLimit: 2, label: "default/test", logger: Self.logger)
        sink.yield(event(1))
        sink.yield(event(2))
        sink.finish()
        #expect(try await drain(stream) == [event(1), event(2)])
    }

    @Test("a sink dropped without finishing ends its stream after its events and the loss it still held")
    func droppedSinkEndsTheStream() async throws {
        var (stream, sink): (AsyncThrowingStream<SubscriptionEvent, any Error>, SubscriptionSink?) = SubscriptionSink.makeStream(
            bufferLimit: 1, label: "default/test", logger: Self.logger, wallClock: Self.wall)
        sink?.yield(event(1))
        sink?.yield(event(2))  // dropped: the buffer holds one
        sink = nil
        let events = try await drain(stream)
        #expect(events.first == event(1))
        guard events.count == 2, case .lost(let loss) = events[1] else {
            Issue.record("expected the kept event and a loss report, got \(events)")
            return
        }
        #expect(loss.count == 1)
    }

    @Test("a loss reaches the consumer as soon as it made room, not with the next event (a quiet stream may have none)")
    func lossReportedOnceThereIsRoom() async throws {
        let (reader, sink) = SubscriptionSink.make(bufferLimit: 1, label: "default/test", logger: Self.logger, wallClock: Self.wall)
        sink.yield(event(1))
        sink.yield(event(2))  // dropped: the buffer holds one
        sink.yield(event(3))  // dropped
        let batches = try await withTestTimeout(5, "the loss report") {
            var batch: [SubscriptionEvent] = []
            _ = try await reader.next(into: &batch)
            let first = batch
            _ = try await reader.next(into: &batch)
            return [first, batch]
        }
        #expect(batches.first == [event(1)])
        guard case .lost(let loss)? = batches.last?.first, batches.last?.count == 1 else {
            Issue.record("expected the loss report alone, got \(batches)")
            return
        }
        #expect(loss.count == 2 && loss.reason == .bufferOverflow)
        _ = sink
    }

    @Test("read one at a time, the loss follows the kept event without another yield")
    func lossReportedOnceThereIsRoomOneAtATime() async throws {
        let (stream, sink) = SubscriptionSink.makeStream(bufferLimit: 1, label: "default/test", logger: Self.logger, wallClock: Self.wall)
        sink.yield(event(1))
        sink.yield(event(2))  // dropped
        let events = try await withTestTimeout(5, "the loss report") {
            var iterator = stream.makeAsyncIterator()
            return [try await iterator.next(), try await iterator.next()]
        }
        #expect(events.first == event(1))
        guard case .lost(let loss)?? = events.last else {
            Issue.record("expected a loss report, got \(events)")
            return
        }
        #expect(loss.count == 1)
        _ = sink
    }

    @Test("an unreadable event is reported at once, in order")
    func undecodableIsReported() async throws {
        let (stream, sink) = SubscriptionSink.makeStream(bufferLimit: 8, label: "default/test", logger: Self.logger, wallClock: Self.wall)
        sink.yield(event(1))
        sink.reportLoss(count: 1, reason: .undecodable)
        sink.yield(event(2))
        sink.finish()
        let events = try await drain(stream)
        #expect(events.count == 3)
        #expect(events.first == event(1))
        #expect(events.last == event(2))
        guard case .lost(let loss) = events[1] else {
            Issue.record("expected a loss report, got \(events[1])")
            return
        }
        #expect(loss.count == 1 && loss.reason == .undecodable)
    }

    @Test func yieldAfterTheConsumerCancelledReturnsFalse() async throws {
        let (stream, sink) = SubscriptionSink.makeStream(bufferLimit: 2, label: "default/test", logger: Self.logger)
        let consumer = Task {
            for try await _ in stream {}
        }
        #expect(sink.yield(event(1)) == true)
        consumer.cancel()
        _ = await consumer.result
        #expect(sink.yield(event(2)) == false)
        #expect(sink.yield(event(3)) == false)
    }

    @Test func yieldAfterFinishReturnsFalse() async throws {
        let (stream, sink) = SubscriptionSink.makeStream(bufferLimit: 4, label: "default/test", logger: Self.logger)
        #expect(sink.yield(.live) == true)
        sink.finish()
        #expect(sink.yield(event(1)) == false)
        #expect(try await drain(stream) == [.live])
    }

    @Test func finishWithAnErrorReachesTheConsumerAfterBufferedEvents() async throws {
        let (stream, sink) = SubscriptionSink.makeStream(bufferLimit: 4, label: "default/test", logger: Self.logger)
        sink.yield(.live)
        sink.yield(event(1))
        sink.finish(throwing: RealtimeError.disconnected)
        var received: [SubscriptionEvent] = []
        await #expect(throws: RealtimeError.disconnected) {
            for try await event in stream { received.append(event) }
        }
        #expect(received == [.live, event(1)])
    }
}

// MARK: - ManualClock

@Suite("ManualClock")
struct ManualClockTests {
    /// Starts a task sleeping `seconds` on `clock` that records its wake-up in `woken`.
    private func sleeper(_ clock: ManualClock, _ seconds: Int, _ woken: Locked<[Int]>) -> Task<Void, any Error> {
        Task {
            try await clock.sleep(for: .seconds(seconds))
            woken.withLock { $0.append(seconds) }
        }
    }

    @Test func sleepersWakeOnlyWhenAdvancedPastTheirDeadline() async throws {
        let clock = ManualClock()
        let woken = Locked<[Int]>([])
        let three = sleeper(clock, 3, woken)
        try await clock.waitForSleepers(atLeast: 1)
        let one = sleeper(clock, 1, woken)
        try await clock.waitForSleepers(atLeast: 2)
        let two = sleeper(clock, 2, woken)
        try await clock.waitForSleepers(atLeast: 3)

        clock.advance(by: .milliseconds(999))
        #expect(clock.sleeperCount == 3)
        clock.advance(by: .milliseconds(1))
        #expect(clock.sleeperCount == 2)
        try await withTestTimeout { try await one.boundedValue() }
        #expect(woken.withLock { $0 } == [1])

        clock.advance(by: .milliseconds(500))
        #expect(clock.sleeperCount == 2)
        clock.advance(by: .milliseconds(600))
        #expect(clock.sleeperCount == 1)
        try await withTestTimeout { try await two.boundedValue() }
        #expect(woken.withLock { $0 } == [1, 2])

        clock.advance(by: .seconds(10))
        #expect(clock.sleeperCount == 0)
        try await withTestTimeout { try await three.boundedValue() }
        #expect(woken.withLock { $0 } == [1, 2, 3])
        #expect(clock.now.offset == .milliseconds(12_100))
    }

    @Test func oneAdvanceWakesEverySleeperThatIsDue() async throws {
        let clock = ManualClock()
        let woken = Locked<[Int]>([])
        let tasks = [5, 1, 3, 7].map { sleeper(clock, $0, woken) }
        try await clock.waitForSleepers(atLeast: 4)
        clock.advance(by: .seconds(5))
        #expect(clock.sleeperCount == 1)
        for index in 0..<3 { try await withTestTimeout { try await tasks[index].value } }
        #expect(Set(woken.withLock { $0 }) == [1, 3, 5])
        clock.advance(by: .seconds(2))
        try await withTestTimeout { try await tasks[3].value }
        #expect(woken.withLock { $0 }.last == 7)
    }

    @Test func sleepingUntilAPastDeadlineReturnsAtOnce() async throws {
        let clock = ManualClock()
        clock.advance(by: .seconds(5))
        #expect(clock.now.offset == .seconds(5))
        try await withTestTimeout {
            try await clock.sleep(until: ManualClock.Instant(offset: .seconds(3)))
            try await clock.sleep(until: ManualClock.Instant(offset: .seconds(5)))
            try await clock.sleep(for: .zero)
        }
        #expect(clock.sleeperCount == 0)
    }

    @Test func cancellingASleepingTaskThrowsCancellationError() async throws {
        let clock = ManualClock()
        let task = Task { try await clock.sleep(for: .seconds(60)) }
        try await clock.waitForSleepers(atLeast: 1)
        task.cancel()
        await #expect(throws: CancellationError.self) {
            try await withTestTimeout(5, "the cancelled sleeper") { try await task.boundedValue() }
        }
        #expect(clock.sleeperCount == 0)
    }

    @Test func cancellingBeforeSleepingThrowsCancellationError() async throws {
        let clock = ManualClock()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await clock.sleep(for: .seconds(60))
        }
        await #expect(throws: CancellationError.self) {
            try await withTestTimeout(5, "the cancelled sleeper") { try await task.boundedValue() }
        }
        #expect(clock.sleeperCount == 0)
    }

    @Test func waitForSleepersTimesOutWhenNobodySleeps() async throws {
        let clock = ManualClock()
        await #expect(throws: TestTimeoutError.self) {
            try await clock.waitForSleepers(atLeast: 1, timeout: 0.05)
        }
        let task = Task { try await clock.sleep(for: .seconds(1)) }
        try await clock.waitForSleepers(atLeast: 1, timeout: 5)
        await #expect(throws: TestTimeoutError.self) {
            try await clock.waitForSleepers(atLeast: 2, timeout: 0.05)
        }
        clock.advance(by: .seconds(1))
        try await withTestTimeout { try await task.boundedValue() }
    }

    @Test func instantArithmetic() {
        let start = ManualClock.Instant(offset: .seconds(2))
        let later = start.advanced(by: .milliseconds(1500))
        #expect(later.offset == .milliseconds(3500))
        #expect(start.duration(to: later) == .milliseconds(1500))
        #expect(later.duration(to: start) == .milliseconds(-1500))
        #expect(start < later)
        #expect(!(later < start))
    }
}

// MARK: - Descriptions

@Suite("Error and credential descriptions")
struct DescriptionTests {
    @Test(
        "RealtimeError descriptions",
        arguments: [
            (RealtimeError.sessionExpired("refresh failed"), "session expired: refresh failed"),
            (.signedOut, "signed out"),
            (.network("connection refused"), "network error: connection refused"),
            (.connectionTimedOut(.seconds(15)), "connection not acknowledged within 15.0 seconds"),
            (.keepAliveTimedOut(.seconds(300)), "no keep-alive within 300.0 seconds; connection presumed dead"),
            (.subscriptionRejected(errorType: "UnauthorizedException", message: "no"), "subscription rejected: UnauthorizedException: no"),
            (.subscriptionRejected(errorType: "BadRequestException", message: nil), "subscription rejected: BadRequestException"),
            (.publishRejected(errorType: "UnauthorizedException", message: "x"), "publish rejected: UnauthorizedException: x"),
            (.publishRejected(errorType: "HTTP 500", message: nil), "publish rejected: HTTP 500"),
            (.invalidChannel("a//b", reason: "empty segment at position 2"), #"invalid channel "a//b": empty segment at position 2"#),
            (.invalidPublish("no events"), "invalid publish: no events"),
            (.invalidEndpoint("bad"), "invalid endpoint: bad"),
            (.subscriptionLimitReached(200), "subscription limit reached: at most 200 per connection"),
            (.protocolViolation("unknown type"), "protocol violation: unknown type"),
            (.closedByServer(code: 4401, reason: "Unauthorized"), "closed by server with 4401 Unauthorized"),
            (.closedByServer(code: 1000, reason: ""), "closed by server with 1000"),
            (.serverError(errorType: "InternalFailure", message: "boom"), "server error: InternalFailure: boom"),
            (.serverError(errorType: "InternalFailure", message: nil), "server error: InternalFailure"),
            (.graphQLErrors(#"[{"message":"x"}]"#), #"GraphQL errors: [{"message":"x"}]"#),
            (.reconnectAttemptsExhausted(5), "gave up reconnecting after 5 attempts"),
            (.unsupported("publish over GraphQL"), "unsupported: publish over GraphQL"),
            (.disconnected, "disconnected"),
        ])
    func realtimeError(error: RealtimeError, expected: String) {
        #expect(error.description == expected)
        #expect("\(error)" == expected)
    }

    @Test(
        "WebSocketCloseInfo descriptions",
        arguments: [
            (WebSocketCloseInfo(code: nil), "1006 (remote)"),
            (WebSocketCloseInfo(code: nil, reason: "connection reset"), "1006 connection reset (remote)"),
            (WebSocketCloseInfo(code: 1000, reason: "bye", initiatedLocally: true), "1000 bye (local)"),
            (WebSocketCloseInfo(code: 4401, reason: "Unauthorized"), "4401 Unauthorized (remote)"),
            (WebSocketCloseInfo(code: 1001, initiatedLocally: true), "1001 (local)"),
        ])
    func closeInfo(info: WebSocketCloseInfo, expected: String) {
        #expect(info.description == expected)
    }

    @Test func effectiveCodeReportsAbnormalClosure() {
        #expect(WebSocketCloseInfo(code: nil).effectiveCode == 1006)
        #expect(WebSocketCloseInfo(code: 1000).effectiveCode == 1000)
    }

    static let secret = "s3cr3t-T0KEN-value"
    static let accessKey = "AKIAEXAMPLEACCESSKEY"

    @Test(
        "credential descriptions never contain secrets",
        arguments: [
            (AuthCredentials.apiKey(secret), "apiKey(<redacted>)"),
            (.bearerToken(secret), "bearerToken(<redacted>)"),
            (.lambdaToken(secret), "lambdaToken(<redacted>)"),
            (
                .iam(AWSCredentials(accessKeyID: accessKey, secretAccessKey: secret, sessionToken: secret, region: "us-east-1")),
                "iam(AWSCredentials(region: us-east-1, <redacted>))"
            ),
        ])
    func credentialDescriptions(credentials: AuthCredentials, expected: String) {
        #expect(credentials.description == expected)
        for rendering in [
            credentials.description, "\(credentials)", String(describing: credentials), String(reflecting: credentials),
            "\(StaticAuthSession(credentials))", "\([credentials])", "\(DisconnectReason.failed(.sessionExpired("\(credentials)")))",
        ] {
            #expect(!rendering.contains(Self.secret), "\(rendering)")
            #expect(!rendering.contains(Self.accessKey), "\(rendering)")
        }
    }

    @Test func awsCredentialsDescriptionKeepsOnlyTheRegion() {
        let credentials = AWSCredentials(
            accessKeyID: Self.accessKey, secretAccessKey: Self.secret, sessionToken: "token-xyz", region: "eu-west-1")
        #expect(credentials.description == "AWSCredentials(region: eu-west-1, <redacted>)")
        for rendering in ["\(credentials)", String(reflecting: credentials)] {
            #expect(!rendering.contains(Self.secret))
            #expect(!rendering.contains(Self.accessKey))
            #expect(!rendering.contains("token-xyz"))
        }
    }

    @Test(
        "connection state descriptions",
        arguments: [
            (ConnectionState.idle, "idle"),
            (.connecting, "connecting"),
            (.connected, "connected"),
            (.reconnecting(attempt: 2, delay: .seconds(10)), "reconnecting(attempt: 2, delay: 10.0 seconds)"),
            (.disconnected(.requested), "disconnected(requested)"),
            (.disconnected(.signedOut), "disconnected(signed out)"),
            (.disconnected(.sessionExpired), "disconnected(session expired)"),
            (.disconnected(.failed(.reconnectAttemptsExhausted(3))), "disconnected(failed: gave up reconnecting after 3 attempts)"),
        ])
    func connectionState(state: ConnectionState, expected: String) {
        #expect(state.description == expected)
    }
}

extension SubscriptionSink {
    /// A sink and its stream read one event at a time (its batch reader released at once, as `subscribe(_:)` does:
    /// the stream alone then holds the consumer's side).
    fileprivate static func makeStream(
        bufferLimit: Int, label: String, logger: Logger, wallClock: WallClock = .system, margin: Duration = .zero
    ) -> (AsyncThrowingStream<SubscriptionEvent, any Error>, SubscriptionSink) {
        let made = make(bufferLimit: bufferLimit, label: label, logger: logger, wallClock: wallClock, margin: margin)
        return (made.reader.elements, made.sink)
    }
}
