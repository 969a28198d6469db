import SubscriberCore

/// A ``ScriptedTransport`` whose `disconnect()` and `subscribe(_:)` can be made to park until the test releases
/// them: the way to test interleavings (an observer or a switch arriving while an identity update is disconnecting)
/// deterministically, without sleeping.
public final class ParkingTransport: RealtimeTransport, Sendable {
    /// The calls that can park.
    public enum Call: Sendable, Hashable {
        /// `disconnect()`.
        case disconnect
        /// `subscribe(_:)`.
        case subscribe
    }

    private struct State {
        var parking: Set<Call> = []
        var parked: [(call: Call, continuation: CheckedContinuation<Void, Never>)] = []
    }

    /// The scripted transport behind it: subscriptions, events, states.
    public let scripted: ScriptedTransport
    private let state = Locked(State())

    /// Creates a transport speaking `dialect`.
    public init(name: String? = nil, dialect: TransportDialect) {
        scripted = ScriptedTransport(name: name, dialect: dialect)
    }

    /// The transport's name.
    public var name: String { scripted.name }
    /// The dialect it speaks.
    public var dialect: TransportDialect { scripted.dialect }

    /// From now on, `call` parks until ``release(_:)``.
    public func park(_ call: Call) { _ = state.withLock { $0.parking.insert(call) } }

    /// Stops parking `call` and lets every parked call of that kind go on.
    public func release(_ call: Call) {
        let released = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.parking.remove(call)
            let released = state.parked.filter { $0.call == call }.map(\.continuation)
            state.parked.removeAll { $0.call == call }
            return released
        }
        for continuation in released { continuation.resume() }
    }

    /// How many calls of `call` are parked now.
    public func parkedCount(_ call: Call) -> Int { state.withLock { $0.parked.filter { $0.call == call }.count } }

    /// Waits (in real time, briefly yielding) until `count` calls of `call` are parked.
    public func waitUntilParked(_ call: Call, count: Int = 1, timeout: Double = scriptedWait) async throws {
        try await withTestTimeout(timeout, "\(count) parked \(call) call(s)") { [state] in
            while state.withLock({ $0.parked.filter { $0.call == call }.count }) < count { try await TestTime.pollPause() }
        }
    }

    private func parkIfAsked(_ call: Call) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let parked = state.withLock { state -> Bool in
                guard state.parking.contains(call) else { return false }
                state.parked.append((call, continuation))
                return true
            }
            if !parked { continuation.resume() }
        }
    }

    /// Parks if asked, then subscribes on the scripted transport.
    public func subscribe(_ request: SubscriptionRequest) async -> AsyncThrowingStream<SubscriptionEvent, any Error> {
        await parkIfAsked(.subscribe)
        return await scripted.subscribe(request)
    }

    /// Publishes on the scripted transport.
    public func publish(_ request: PublishRequest) async throws -> PublishResult { try await scripted.publish(request) }

    /// Parks if asked, then disconnects the scripted transport.
    public func disconnect() async {
        await parkIfAsked(.disconnect)
        await scripted.disconnect()
    }

    /// Verifies the scripted transport's connection (counted there).
    public func verifyConnection() async { await scripted.verifyConnection() }

    /// The scripted transport's states.
    public func connectionStates() async -> AsyncStream<ConnectionState> { await scripted.connectionStates() }
}
