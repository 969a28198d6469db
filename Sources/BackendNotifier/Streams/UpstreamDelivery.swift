import SubscriberCore

/// Where one upstream run's events go: straight to the public streams, nowhere (stopped), or through a switch's
/// overlap. Read once per event by the run's pump (one lock, as the delivery gate it replaces); changed by the
/// notifier as the state machine says.
final class UpstreamDelivery: Sendable {
    enum Mode: Sendable {
        /// Straight to the public streams.
        case open
        /// Stopped: events are dropped.
        case closed
        /// The old transport's run during a switch.
        case old(SwitchOverlap)
        /// The new transport's run during a switch.
        case new(SwitchOverlap)
    }

    private let state: Locked<Mode>

    init(_ mode: Mode) {
        state = Locked(mode)
    }

    var mode: Mode { state.withLock { $0 } }

    func set(_ mode: Mode) {
        state.withLock { $0 = mode }
    }

    func close() { set(.closed) }

    /// Back to direct delivery when `overlap` is over (a run that was stopped stays stopped).
    func reopen(after overlap: SwitchOverlap) {
        state.withLock { mode in
            switch mode {
            case .old(let current), .new(let current): if current === overlap { mode = .open }
            case .open, .closed: break
            }
        }
    }
}
