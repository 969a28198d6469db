/// A handle on one open link, for the transport's other tasks: wake its writer, schedule a protocol timer, probe it,
/// close or abort it. Every method is synchronous and safe from any task; after the link ended they do nothing.
package final class LinkControl: Sendable {
    /// A request to end the link, carried out by its scope.
    package enum Ending: Sendable {
        /// Send a close frame and end the link.
        case close(LinkEnd, code: UInt16, reason: String)
        /// Drop the socket without a handshake.
        case abort(LinkEnd)
    }

    /// The link's number, unique within its transport.
    package let id: Int
    private let wakeWriter: @Sendable () -> Void
    private let scheduleTimer: @Sendable (Duration, Int) -> Void
    private let probeLink: @Sendable (Duration) -> Void
    private let ending: OneShotSignal<Ending>

    /// Creates a handle; the link's scope supplies what it does (tests of a transport's state supply recorders).
    package init(
        id: Int, ending: OneShotSignal<Ending>, wakeWriter: @escaping @Sendable () -> Void,
        scheduleTimer: @escaping @Sendable (Duration, Int) -> Void, probe: @escaping @Sendable (Duration) -> Void = { _ in }
    ) {
        self.id = id
        self.ending = ending
        self.wakeWriter = wakeWriter
        self.scheduleTimer = scheduleTimer
        self.probeLink = probe
    }

    /// Asks the writer to send what the driver's ``LinkDriver/pendingMessages()`` returns. Wakes coalesce.
    package func wake() { wakeWriter() }

    /// Calls the driver's ``LinkDriver/timerFired(_:)`` with `token` after `delay` on the transport's clock.
    package func schedule(after delay: Duration, token: Int) { scheduleTimer(delay, token) }

    /// Checks at once that the link still works: a ping now (a WebSocket ping, or the protocol's where the server
    /// ignores those), the link counting as dead if nothing answers within `timeout`.
    package func probe(timeout: Duration) { probeLink(timeout) }

    /// Ends the link with a close frame (at most one request counts).
    package func close(_ end: LinkEnd, code: UInt16 = 1000, reason: String) {
        ending.fire(.close(end, code: code, reason: reason))
    }

    /// Ends the link at once, without a closing handshake.
    package func abort(_ end: LinkEnd) {
        ending.fire(.abort(end))
    }

    /// Whether the link was asked to end (or ended).
    package var isEnding: Bool { ending.isFired }
}
