import Foundation
import SubscriberCore

/// The faults a test or a developer can inject into the running server (`POST /vortex/faults` with `admin`, or
/// directly in-process). Both protocols consult the same injector: the AppSync side and the GraphQL side.
public final class FaultInjector: Sendable {
    /// The injector's current settings.
    public struct State: Sendable, Codable, Equatable {
        /// `ka` (and the GraphQL side's keep-alives) are not sent while `true`.
        public var keepAliveStopped = false
        /// Every outgoing frame waits this many milliseconds before it is written (0: off).
        public var frameDelayMilliseconds = 0
        /// The next this-many outgoing data frames (`data`, GraphQL `next`) are silently dropped.
        public var pendingDataFrameDrops = 0
        /// The next this-many WebSocket upgrades (either protocol) are refused with HTTP 503.
        public var pendingConnectionRefusals = 0
        /// JWTs issued before this time are treated as expired; `nil`: off.
        public var tokensExpiredBefore: Date?
        /// Protocols that are down: their open sockets were closed and their upgrades are refused with 503.
        public var outages: Set<ConnectionRegistry.Kind> = []
    }

    private let state = Locked(State())
    private let withheldKeepAlives = Locked(0)
    private let connections: ConnectionRegistry

    init(connections: ConnectionRegistry) { self.connections = connections }

    /// A copy of the current settings.
    public var snapshot: State { state.withLock { $0 } }

    /// Closes every open WebSocket of both protocols with `code`; returns how many were open.
    @discardableResult
    public func closeAllConnections(code: UInt16, reason: String = "closed by fault injection") -> Int {
        connections.closeAll(code: code, reason: reason)
    }

    /// Takes one protocol down (`true`: close its sockets with 1001 and refuse its upgrades with 503) or brings it
    /// back, leaving the other protocol alone: the outage a failover test needs.
    @discardableResult
    public func setOutage(of kind: ConnectionRegistry.Kind, _ down: Bool) -> Int {
        state.withLock { state in
            if down { state.outages.insert(kind) } else { state.outages.remove(kind) }
        }
        return down ? connections.closeAll(of: kind, code: 1001, reason: "outage (fault injection)") : 0
    }

    /// Whether upgrades for `kind` are refused by an outage.
    public func isDown(_ kind: ConnectionRegistry.Kind) -> Bool { state.withLock { $0.outages.contains(kind) } }

    /// Stops (`true`) or resumes (`false`) keep-alive messages on every connection.
    public func setKeepAliveStopped(_ stopped: Bool) { state.withLock { $0.keepAliveStopped = stopped } }

    /// Whether keep-alives are currently suppressed.
    public var isKeepAliveStopped: Bool { state.withLock { $0.keepAliveStopped } }

    /// How many keep-alives have been withheld while stopped, on every connection: a test waits for it to grow to know
    /// that a keep-alive timer fired and sent nothing, instead of waiting a while for silence.
    public var keepAlivesWithheld: Int { withheldKeepAlives.withLock { $0 } }

    /// Whether a keep-alive that is due may be sent; one that may not is counted as withheld.
    func allowsKeepAlive() -> Bool {
        guard isKeepAliveStopped else { return true }
        withheldKeepAlives.withLock { $0 += 1 }
        return false
    }

    /// Delays every outgoing frame by `delay` (zero turns it off).
    public func setFrameDelay(_ delay: Duration) {
        let milliseconds = max(0, Int(delay.components.seconds * 1000 + delay.components.attoseconds / 1_000_000_000_000_000))
        state.withLock { $0.frameDelayMilliseconds = milliseconds }
    }

    /// The current delay before each outgoing frame.
    public var frameDelay: Duration { .milliseconds(state.withLock { $0.frameDelayMilliseconds }) }

    /// Drops the next `count` outgoing data frames (replacing any pending count).
    public func dropNextDataFrames(_ count: Int) { state.withLock { $0.pendingDataFrameDrops = max(0, count) } }

    /// Called before writing a data frame: `true` (and one fewer pending) when this frame is to be dropped.
    public func consumeDataFrameDrop() -> Bool { consume(\.pendingDataFrameDrops) }

    /// Refuses the next `count` WebSocket upgrades with 503 (replacing any pending count).
    public func refuseNextConnections(_ count: Int) { state.withLock { $0.pendingConnectionRefusals = max(0, count) } }

    /// Called for every upgrade request: `true` (and one fewer pending) when this one is to be refused.
    public func consumeConnectionRefusal() -> Bool { consume(\.pendingConnectionRefusals) }

    /// Takes one from a pending count: `true` when there was one.
    private func consume(_ pending: WritableKeyPath<State, Int>) -> Bool {
        state.withLock { state in
            guard state[keyPath: pending] > 0 else { return false }
            state[keyPath: pending] -= 1
            return true
        }
    }

    /// Treats every JWT issued before `date` (default: now) as expired from now on.
    public func expireTokens(issuedBefore date: Date = Date()) { state.withLock { $0.tokensExpiredBefore = date } }

    /// Whether a token issued at `issuedAt` counts as expired by ``expireTokens(issuedBefore:)``; a token without
    /// `iat` counts as issued before any cut-off.
    public func isExpiredByFault(issuedAt: Date?) -> Bool {
        guard let cutoff = state.withLock({ $0.tokensExpiredBefore }) else { return false }
        guard let issuedAt else { return true }
        return issuedAt < cutoff
    }

    /// Clears every fault.
    public func reset() { state.withLock { $0 = State() } }
}
