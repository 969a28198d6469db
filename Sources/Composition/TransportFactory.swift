import AppSyncEventsTransport
import Foundation
import GraphQLTransport
import Logging
import SubscriberCore

/// Builds a transport of either kind from a ``RealtimeConfiguration``: the only place that knows every transport.
///
/// ``RealtimeConfiguration/bufferLimit`` governs the whole path: it is each transport's per-subscription buffer here,
/// and each notifier observer's buffer (``RealtimeConfiguration/notifierConfiguration``).
public struct TransportFactory: Sendable {
    /// The validated configuration.
    public let configuration: RealtimeConfiguration
    /// The app's authentication (GraphQL always uses it; AppSync unless `authMode` is `apiKey`).
    public let auth: any AuthSession
    /// The WebSocket implementation.
    public let connector: any WebSocketConnector
    /// Runs every timer.
    public let clock: any Clock<Duration>
    /// Timestamps gap windows.
    public let wallClock: WallClock
    /// The transports' logger.
    public let logger: Logger
    /// The device's network path, shared by every transport made here (each listens on its own stream); `nil`: none.
    public let networkPathMonitor: (any NetworkPathMonitor)?

    /// Creates a factory. `networkPathMonitor` defaults to none; ``RealtimeStack`` passes the platform's
    /// (``TransportFactory/platformPathMonitor()``).
    public init(
        configuration: RealtimeConfiguration, auth: any AuthSession, connector: any WebSocketConnector = TransportFactory.platformConnector,
        clock: any Clock<Duration> = ContinuousClock(), wallClock: WallClock = .system, logger: Logger = Logger(label: "vortex.realtime"),
        networkPathMonitor: (any NetworkPathMonitor)? = nil
    ) {
        self.configuration = configuration
        self.auth = auth
        self.connector = connector
        self.clock = clock
        self.wallClock = wallClock
        self.logger = logger
        self.networkPathMonitor = networkPathMonitor
    }

    /// A new, unconnected transport of `kind`.
    /// - Throws: ``ConfigurationError`` when `kind`'s endpoint is missing or malformed, or a number of the configuration
    ///   is out of its bounds (``RealtimeConfiguration/validate()`` reports the same; `NaN` and infinities included).
    public func make(_ kind: RealtimeConfiguration.TransportKind) throws -> any RealtimeTransport {
        try configuration.checkSettings(\.isConverted)
        switch kind {
        case .appsync:
            return try makeAppSync()
        case .graphql:
            guard let text = configuration.graphQLEndpoint else {
                throw ConfigurationError(["graphQLEndpoint: required for transport graphql"])
            }
            var settings = try GraphQLTransportConfiguration(text)
            settings.link = try configuration.linkSettings
            settings.connectionPayload = try configuration.connectionPayloadBuilder(logger: logger)
            return GraphQLTransport(
                configuration: settings, auth: auth, connector: connector, pathMonitor: networkPathMonitor, clock: clock,
                wallClock: wallClock, logger: logger)
        }
    }
}

extension TransportFactory {
    /// The WebSocket request a GraphQL transport of this configuration opens (its URL and the `graphql-transport-ws`
    /// subprotocol), for tools that speak to the server themselves: preflight reads the schema over it.
    package func graphQLWebSocketRequest() throws -> WebSocketRequest {
        guard let text = configuration.graphQLEndpoint else { throw ConfigurationError(["graphQLEndpoint: required"]) }
        let settings = try GraphQLTransportConfiguration(text)
        return WebSocketRequest(
            url: settings.url, subprotocols: [GraphQLTransport.subprotocol], requiredSubprotocol: GraphQLTransport.subprotocol)
    }

    /// A new, unconnected AppSync Events transport from the configuration, with `adjust` applied last to the settings
    /// no ``RealtimeConfiguration`` key covers (for example the publish route of a command-line publish).
    /// - Throws: ``ConfigurationError`` as ``make(_:)`` does.
    public func makeAppSync(adjusting adjust: (inout AppSyncEventsConfiguration) -> Void = { _ in }) throws -> AppSyncEventsTransport {
        try configuration.checkSettings(\.isConverted)
        guard let text = configuration.appSyncEndpoint else {
            throw ConfigurationError(["appSyncEndpoint: required for transport appsync"])
        }
        var settings = AppSyncEventsConfiguration(endpoint: try AppSyncEndpoint(text))
        settings.link = try configuration.linkSettings
        settings.maxConnectionDuration = configuration.maxConnectionDurationSeconds.map { .seconds($0) }
        adjust(&settings)
        let session: any AuthSession =
            configuration.authMode == .apiKey ? APIKeyAuthSession(signedIn: auth, apiKey: configuration.apiKey ?? "") : auth
        return AppSyncEventsTransport(
            configuration: settings, auth: session, connector: connector, pathMonitor: networkPathMonitor, clock: clock,
            wallClock: wallClock, logger: logger)
    }
}

/// AppSync with a fixed API key, while sign-in state still comes from the app's session.
struct APIKeyAuthSession: AuthSession {
    let signedIn: any AuthSession
    let apiKey: String

    func isSignedIn() async -> Bool { await signedIn.isSignedIn() }
    func credentials(forceRefresh: Bool) async throws -> AuthCredentials { .apiKey(apiKey) }
}
