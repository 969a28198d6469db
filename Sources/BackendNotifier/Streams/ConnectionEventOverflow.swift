import Foundation
import SubscriberCore

extension NotifierConnectionEvent {
    /// What a full ``BackendNotifier/connectionEvents()`` buffer does: no window and no end of a session is dropped.
    ///
    /// A reader that falls behind while observers overflow would otherwise lose the very reports of those losses (one
    /// per delivery that dropped values). Reports of one stream's losses, or of its resumption, merge into the one
    /// still queued (counts added, windows joined: the app refetches the joined window); `live` and `suspended`, states
    /// a later event supersedes, make room; switches, stream failures and session ends are kept beyond the limit,
    /// which each takes a change of the connection to add.
    static let overflowRule = StreamBuffer<NotifierConnectionEvent>.OverflowRule(
        merge: { queued, new in
            switch (queued, new) {
            case (.eventsLost(let stream, let transport, let held), .eventsLost(let newStream, let newTransport, let loss))
            where (stream, transport, held.reason) == (newStream, newTransport, loss.reason):
                queued = .eventsLost(
                    stream: stream, transport: transport,
                    loss: LossReport(count: held.count + loss.count, window: held.window.joined(with: loss.window), reason: held.reason))
                return true
            case (.resumed(let stream, let transport, let held), .resumed(let newStream, let newTransport, let gap))
            where (stream, transport) == (newStream, newTransport):
                queued = .resumed(stream: stream, transport: transport, gap: held.joined(with: gap))
                return true
            default:
                return false
            }
        },
        expendable: { event in
            switch event {
            case .live, .suspended: true
            default: false
            }
        })
}

extension GapWindow {
    /// The smallest window holding both.
    fileprivate func joined(with other: GapWindow) -> GapWindow {
        GapWindow(start: min(start, other.start), end: max(end, other.end))
    }
}
