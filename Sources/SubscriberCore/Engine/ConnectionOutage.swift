import Foundation

/// What a transport reports while it is not connected (``RealtimeTransport/lastConnectionFailure`` and
/// ``RealtimeTransport/connectionLostAt``), kept by its supervisor from each link's end.
package struct ConnectionOutage: Sendable, Equatable {
    /// Why the latest connection was lost or could not be made since one was last acknowledged.
    package var lastFailure: String?
    /// When the latest acknowledged connection was lost (its last frame received).
    package var lostAt: Date?

    /// An outage with nothing recorded: before the first link, or after a requested disconnect.
    package init() {}

    /// Records a link's end: `report`, with `loss` what the transport made of it; `now` stands in for the last frame
    /// of an acknowledged link that received none.
    package mutating func record(_ report: LinkReport, loss: LinkLoss, now: Date) {
        // An acknowledged link makes any failure before it history.
        if case .lost(let ending) = loss, ending != .requested {
            lastFailure = report.close.map { "\(report.end), close \($0)" } ?? "\(report.end)"
        } else if report.acknowledged {
            lastFailure = nil
        }
        // An outage starts where an acknowledged link fell silent; failed attempts after it do not move it.
        if case .lost(let ending) = loss, report.acknowledged || ending == .requested {
            lostAt = ending == .requested ? nil : report.lastReceived ?? now
        }
    }
}
