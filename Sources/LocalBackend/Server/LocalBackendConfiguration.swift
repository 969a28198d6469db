import AppSyncEventsWire

/// Everything that shapes a ``LocalBackendServer``.
public struct LocalBackendConfiguration: Sendable {
    /// The address to listen on. Default `127.0.0.1`.
    public var host = "127.0.0.1"
    /// The port; 0 picks a free one (read it from ``LocalBackendEndpoints``). Default 0.
    public var port = 0
    /// Accepted API keys (`x-api-key`): trusted backend identities allowed on every channel.
    public var apiKeys: [String] = []
    /// The HS256 secret of accepted JWTs (`Authorization`): `sub` is the user id, `exp` is enforced. `nil`: no JWTs.
    /// At least 32 bytes (``LocalBackendServer/start()`` refuses shorter ones).
    public var jwtSecret: String?
    /// Accepted IAM credentials, access key id → secret access key: trusted backend identities allowed on every
    /// channel. Signatures are verified over the exact signed bodies, within 5 minutes of the server's clock.
    public var iamCredentials: [String: String] = [:]
    /// The region IAM credentials must be scoped to. Default `us-east-1`.
    public var region = "us-east-1"
    /// How often `ka` is sent. Default 60 s (the service's cadence).
    public var keepAliveInterval: Duration = .seconds(60)
    /// The `connectionTimeoutMs` announced in `connection_ack`. Default 300000 (the service's).
    public var connectionTimeoutMs = 300_000
    /// When set, each connection is closed with 1000 this long after it opened, like the service's maximum
    /// connection duration. Default `nil`.
    public var maxConnectionDuration: Duration?
    /// How long a `/graphql` (graphql-transport-ws) connection may stay open without a `connection_init` before
    /// the server closes it with 4408. Default 3 s.
    public var graphQLInitTimeout: Duration = .seconds(3)
    /// The namespaces channels may use: a subscribe or publish on any other namespace is refused with
    /// `BadRequestException` ("Namespace … does not exist"), as the service refuses namespaces the API does not
    /// declare. Each is a valid namespace name (1 to 50 characters of `A-Z a-z 0-9 -`, starting and ending with a
    /// letter or digit); at least one. Default ``defaultNamespaces``. Domain events fan out on `vortex-app`
    /// channels, so keep `vortex-app` for them to reach AppSync subscribers.
    public var namespaces: [String] = LocalBackendConfiguration.defaultNamespaces
    /// Users, organizations, roles and device groups, for domain event fan-out. Default ``UserDirectory/sample``.
    public var directory: UserDirectory = .sample
    /// Enables the admin endpoints under `/vortex`: `POST /vortex/events`, `POST`/`GET /vortex/faults`,
    /// `GET /vortex/status`. Default `false`.
    public var admin = false
    /// Serves `https://` and `wss://` with this certificate instead of `http://` and `ws://` (``LocalBackendEndpoints``
    /// then say so). Default `nil`.
    public var tls: LocalBackendTLS?
    /// The Lambda authorizer: token → user id, or `nil` to deny. Consulted for `Authorization` values that are not
    /// JWTs this server signed.
    public var lambdaAuthorizer: (@Sendable (String) async -> String?)?

    /// A configuration with every default.
    public init() {}

    /// The namespaces a server declares unless told otherwise: `vortex-app` (the Vortex user channels) and `default`.
    public static let defaultNamespaces = ["vortex-app", "default"]

    /// Why `namespaces` cannot be used (empty, or a name the service would not accept), or `nil` when it can.
    public static func namespaceProblem(_ namespaces: [String]) -> String? {
        guard !namespaces.isEmpty else { return "namespaces: declare at least one" }
        for namespace in namespaces {
            // A namespace is a channel of exactly one segment, without the optional slashes.
            let valid = !namespace.contains("/") && (try? ChannelName.validate(namespace, for: .publish)) != nil
            if !valid {
                return "namespace \"\(namespace)\": 1 to 50 characters of A-Z, a-z, 0-9 and '-', starting and ending with a letter or digit"
            }
        }
        return nil
    }
}
