import Foundation
import Logging
import SubscriberCore

extension NotifierStateMachine {
    /// How a new run's events reach the public streams.
    enum Delivery: Equatable, Sendable {
        /// Straight to the public streams.
        case open
        /// Held while switch `switch` prepares (the old transport still delivers), then delivered at the cut-over
        /// minus what the old transport already delivered.
        case held(switch: Int)
    }

    /// One run to start: subscribe `upstream` on `transport` with `identity`.
    struct RunStart: Equatable, Sendable {
        let run: RunID
        let transport: TransportRef
        let identity: Identity
        let delivery: Delivery

        var upstream: Upstream { run.upstream }
    }

    /// A metric the shell records.
    enum Metric: Equatable, Sendable {
        case connectionAttempt(transport: String)
        case reconnect(transport: String)
        case connected(seconds: TimeInterval, transport: String)
        case transportSwitch(from: String, to: String)
    }

    /// A log line the shell writes (never with credentials: the machine knows none).
    struct LogEntry: Equatable, Sendable {
        let level: Logger.Level
        let message: String
        let metadata: [String: String]

        static func info(_ message: String, _ metadata: [String: String]) -> LogEntry {
            LogEntry(level: .info, message: message, metadata: metadata)
        }

        static func warning(_ message: String, _ metadata: [String: String]) -> LogEntry {
            LogEntry(level: .warning, message: message, metadata: metadata)
        }
    }

    /// What the shell must do, in order. Only ``disconnect(transport:token:)`` and
    /// ``verifyConnection(transport:)`` take time; the shell runs them as tasks of its scope, and a disconnect reports
    /// back with ``Event/disconnected(token:)``.
    enum Action: Equatable, Sendable {
        /// Subscribe and pump one upstream.
        case startUpstream(RunStart)
        /// Stop delivering the run's events and cancel it (forgetting a run that ended is the same).
        case stopUpstream(RunID)
        /// Switch `switch` from `from` to `to` begins for `upstream`: the old run (if any) goes on delivering and
        /// records what it delivers, for de-duplication at the cut-over.
        case beginOverlap(switch: Int, upstream: Upstream, old: RunID?, from: TransportRef, to: TransportRef)
        /// Switch `switch` cuts over: every old run stops delivering and every new run delivers what it held, minus
        /// what the old one delivered, in one step per upstream.
        case cutOver(switch: Int)
        /// The overlap of switch `switch` is over (de-duplication ended, or the switch was abandoned): every run still
        /// in it delivers directly again.
        case endOverlap(switch: Int)
        /// Disconnect the transport; report ``Event/disconnected(token:)`` when done.
        case disconnect(transport: Int, token: Int)
        /// Ask the transport to probe its links now (`RealtimeTransport.verifyConnection()`).
        case verifyConnection(transport: Int)
        /// The switch's target is now the active transport.
        case activate(TransportRef)
        /// The machine no longer refers to this transport.
        case forgetTransport(Int)
        /// Follow the transport's connection states, reporting them with its id.
        case followStates(transport: Int)
        /// Stop following connection states.
        case stopFollowingStates
        /// Yield a connection event.
        case emit(NotifierConnectionEvent)
        /// Publish the app-facing connection state.
        case publishState(NotifierConnectionState)
        /// Arm `timer` (replacing one of the same kind) to fire with `token` after `after`.
        case armTimer(Timer, token: Int, after: Duration)
        /// Cancel `timer`.
        case cancelTimer(Timer)
        /// The operation's caller may return.
        case completeOperation(Int)
        /// The operation's caller throws `error`.
        case failOperation(Int, RealtimeError)
        /// Record a metric.
        case metric(Metric)
        /// Write a log line.
        case log(LogEntry)
    }
}
