import SubscriberCore

/// A `LinkControl` for driving a transport's state without a socket: records the writer wakes, the timers scheduled
/// and the ending asked for.
package final class LinkControlRecorder: Sendable {
    /// A timer the state scheduled.
    package struct Schedule: Sendable, Equatable {
        /// After how long.
        package var delay: Duration
        /// The driver's token.
        package var token: Int

        /// Creates a record.
        package init(delay: Duration, token: Int) {
            self.delay = delay
            self.token = token
        }
    }

    /// The link's number.
    package let id: Int
    /// The handle to give the state under test.
    package let control: LinkControl
    private let ending: OneShotSignal<LinkControl.Ending>
    private let log: Locked<(wakes: Int, schedules: [Schedule])>

    /// Creates a recorder for link `id`.
    package init(id: Int) {
        let ending = OneShotSignal<LinkControl.Ending>()
        let log = Locked((wakes: 0, schedules: [Schedule]()))
        self.id = id
        self.ending = ending
        self.log = log
        control = LinkControl(
            id: id, ending: ending, wakeWriter: { log.withLock { $0.wakes += 1 } },
            scheduleTimer: { delay, token in log.withLock { $0.schedules.append(Schedule(delay: delay, token: token)) } })
    }

    /// How often the writer was woken.
    package var wakes: Int { log.withLock { $0.wakes } }
    /// Every timer scheduled, in order.
    package var schedules: [Schedule] { log.withLock { $0.schedules } }
    /// The ending asked for, if any.
    package var requestedEnding: LinkControl.Ending? { ending.value }

    /// The end and reason of a requested close (`nil` for none, or an abort).
    package var closed: (end: LinkEnd, reason: String)? {
        guard case .close(let end, _, let reason)? = requestedEnding else { return nil }
        return (end, reason)
    }
}
