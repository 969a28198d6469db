import Logging

/// Everything a route needs, built once per ``LocalBackendServer/start()``: the seam through which the AppSync
/// routes and the GraphQL route (``GraphQLRoute``) share the bus, the directory, faults, connections and auth.
struct BackendServices: Sendable {
    /// The server's configuration.
    let configuration: LocalBackendConfiguration
    /// The event bus: `domainEvents()` for in-process observation, `directory` and `recipients(of:)` for
    /// permission filtering.
    let bus: EventBus
    /// AppSync subscriptions and fan-out.
    let hub: ChannelHub
    /// Fault injection, consulted by both protocols.
    let faults: FaultInjector
    /// Every open WebSocket of both protocols.
    let connections: ConnectionRegistry
    /// AppSync authorization (API key, JWT, Lambda, IAM).
    let authenticator: AppSyncAuthenticator
    /// The HS256 JWT verifier, when ``LocalBackendConfiguration/jwtSecret`` is set (the GraphQL side verifies the
    /// token of its `connection_init` with it).
    let jwt: JWTVerifier?
    /// The listening `HOST:PORT`.
    let address: ServerAddress
    /// The server's logger (never given credentials).
    let logger: Logger

    /// The AppSync connection settings derived from the configuration.
    var appSyncSettings: AppSyncConnection.Settings {
        AppSyncConnection.Settings(
            keepAliveInterval: configuration.keepAliveInterval,
            connectionTimeoutMs: configuration.connectionTimeoutMs,
            maxConnectionDuration: configuration.maxConnectionDuration,
            namespaces: Set(configuration.namespaces),
            maxMessageBytes: LocalBackendServer.maxMessageBytes)
    }
}
