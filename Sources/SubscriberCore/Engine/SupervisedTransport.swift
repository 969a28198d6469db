import Logging

/// The role of a link in its transport.
package enum LinkRole: Sendable, Equatable {
    /// The link that carries the subscriptions.
    case primary
    /// A replacement opened before the primary reaches its maximum duration (AppSync rotation).
    case successor
}

/// What a link's end means to its transport.
package enum LinkLoss: Sendable, Equatable {
    /// Nothing is lost: another link carries on (a rotated or failed successor link, or a cut-over).
    case replaced
    /// The transport lost its connection; reconnect as the ending says.
    case lost(ReconnectBookkeeping.Ending)
}

/// What a transport asks of its supervisor from any task.
package enum SupervisorRequest: Sendable, Equatable {
    /// Something started or stopped needing a connection.
    case demandChanged
    /// The primary link reached its rotation lead: open a successor.
    case rotate
    /// Check at once that the connection works (the app returned to the foreground): every open link is probed with
    /// the short probe timeout, and a transport waiting to reconnect reconnects now.
    case verifyConnection
}

/// The transport side of the supervisor: everything protocol-specific it needs. Synchronous, lock-protected.
package protocol SupervisedTransport: Sendable {
    /// Whether anything (a subscription, a publish) needs a connection now.
    var wantsConnection: Bool { get }
    /// The request and the driver for a new link.
    func makeLink(id: Int, credentials: AuthCredentials, role: LinkRole) -> (WebSocketRequest, any LinkDriver)
    /// A link ended: the transport updates its subscriptions (gaps start at the report's last frame) and says
    /// whether the connection is lost.
    func linkEnded(id: Int, role: LinkRole, report: LinkReport) -> LinkLoss
    /// The transport stops for good: end every stream with `error`.
    func stop(_ reason: DisconnectReason, error: RealtimeError)
}

/// A ``SupervisedTransport`` whose links' ends and whose stop go to its session, as both transports' do: only
/// ``makeLink(id:credentials:role:)`` is the protocol's own.
package protocol SessionSupervisedTransport: SupervisedTransport {
    associatedtype Session: TransportSession
    /// The run's session.
    var state: Session { get }
    /// Where the stop is logged.
    var logger: Logger { get }
}

extension SessionSupervisedTransport {
    package var wantsConnection: Bool { state.wantsConnection }

    package func linkEnded(id: Int, role: LinkRole, report: LinkReport) -> LinkLoss { state.linkEnded(id, report: report) }

    package func stop(_ reason: DisconnectReason, error: RealtimeError) {
        logger.warning("transport stopped", metadata: ["reason": "\(reason)"])
        state.stop(error: error)
        state.states.update(.disconnected(reason))
    }
}
