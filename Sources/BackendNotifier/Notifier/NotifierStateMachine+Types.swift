import Foundation
import SubscriberCore

// The values the state machine keeps: its runs, its operations and their queue.
extension NotifierStateMachine {
    /// Who is signed in, and whether their session still holds.
    enum Session: Equatable, Sendable {
        /// The identity's upstreams may run (none when nobody is signed in).
        case current(Identity)
        /// `sessionExpired` or `signedOut` was reported for the identity: its upstreams stay down until an identity
        /// update.
        case ended(Identity)

        var identity: Identity {
            switch self {
            case .current(let identity), .ended(let identity): identity
            }
        }

        var hasEnded: Bool { if case .ended = self { true } else { false } }

        /// Whether upstreams may run: someone is signed in and their session holds.
        var allowsRuns: Bool { if case .current(let identity) = self { identity.userId != nil } else { false } }
    }

    /// The app's and the notifier's life.
    enum Lifecycle: Equatable, Sendable {
        case foreground
        /// The background grace delay passed at `since`: every upstream is down until the foreground.
        case suspended(since: Date)
        /// Nothing changes any more; operations return at once.
        case shutDown
    }

    struct Run: Equatable, Sendable {
        let id: RunID
        let transport: TransportRef
        var live = false
        /// When the link carrying this live run was lost (the earliest loss, when several come one after another): it
        /// may have missed events from then on, until its subscription resumes (``Event/upstreamResumed(_:)``): a run
        /// that ends with an error before that owes a window from here.
        var interruptedSince: Date?
    }

    /// An operation waiting for the one running.
    enum Queued: Equatable, Sendable {
        case update(Identity, operation: Int)
        case switchTransport(TransportRef, TransportSwitchReason, onlyFromOtherDialect: Bool, operation: Int)
        case suspend
        case resume(operation: Int)

        /// The identity an update asks for; `nil` for the other operations.
        var identity: Identity? { if case .update(let identity, _) = self { identity } else { nil } }
        var isSwitch: Bool { if case .switchTransport = self { true } else { false } }
    }

    /// The operation running.
    enum Operation: Equatable, Sendable {
        case none
        /// The active transport is being disconnected for a new identity.
        case updating(operation: Int, token: Int, signedOut: Bool)
        /// The active transport is being disconnected after the background grace delay.
        case suspending(token: Int)
        /// A make-before-break switch.
        case switching(TransportSwitch)
    }
}
