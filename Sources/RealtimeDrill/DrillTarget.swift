import BackendNotifier
import Composition
import Logging
import SubscriberCore

/// The backend the drill and the parity check connect to: both endpoints (and any GraphQL operations and
/// `connection_init` template) in a configuration, the credentials, and the identity.
public struct DrillTarget: Sendable {
    /// The endpoints and settings; `transport` and failover are set per notifier.
    public var configuration: RealtimeConfiguration
    /// The credentials of ``identity``.
    public var auth: any AuthSession
    /// Who signs in.
    public var identity: DrillIdentity
    /// The notifiers' logger (errors only by default: the reports are the output).
    public var logger: Logger

    /// Creates a target; `configuration` needs both endpoints.
    public init(configuration: RealtimeConfiguration, auth: any AuthSession, identity: DrillIdentity, logger: Logger? = nil) {
        self.configuration = configuration
        self.auth = auth
        self.identity = identity
        self.logger =
            logger
            ?? {
                var quiet = Logger(label: "vortex.drill")
                quiet.logLevel = .error
                return quiet
            }()
    }

    /// The configuration of a notifier on `kind`.
    public func configuration(_ kind: RealtimeConfiguration.TransportKind) -> RealtimeConfiguration {
        var configuration = self.configuration
        configuration.transport = kind
        configuration.failover.enabled = false
        return configuration
    }

    /// A stack (and notifier) of ``identity`` on `kind`.
    public func stack(_ kind: RealtimeConfiguration.TransportKind) throws -> RealtimeStack {
        try RealtimeStack(
            configuration: configuration(kind), auth: auth, userId: identity.user, organizationId: identity.organization, logger: logger)
    }
}
