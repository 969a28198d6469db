import Foundation
import LocalBackend

/// Where the drill runs: the embedded local backend, or a remote `vortex-realtime serve --admin`.
public protocol DrillBackend: Sendable {
    /// The backend's URLs.
    var endpoints: LocalBackendEndpoints { get }
    /// A token for `user`.
    func token(for user: String) throws -> String
    /// Publishes one domain event through the backend (both protocols fan it out).
    func publish(_ event: DomainEvent) async throws
    /// Stops what the drill started.
    func shutdown() async
}

/// The embedded local backend, started on a free loopback port.
public struct EmbeddedDrillBackend: DrillBackend {
    /// The server.
    public let server: LocalBackendServer
    /// Its URLs.
    public let endpoints: LocalBackendEndpoints
    private let secret: String

    /// Starts a backend with a random JWT secret, `directory` (default: the sample users) and, unless `admin` is
    /// false, the admin endpoints (the drill publishes in-process either way).
    public static func start(directory: UserDirectory = .sample, admin: Bool = true) async throws -> EmbeddedDrillBackend {
        let secret = (0..<4).map { _ in UUID().uuidString }.joined()
        var configuration = LocalBackendConfiguration()
        configuration.jwtSecret = secret
        configuration.admin = admin
        configuration.directory = directory
        let server = LocalBackendServer(configuration: configuration)
        let endpoints = try await server.start()
        return EmbeddedDrillBackend(server: server, endpoints: endpoints, secret: secret)
    }

    public func token(for user: String) throws -> String {
        try DevelopmentToken.make(secret: secret, user: user, ttl: .seconds(3600))
    }

    public func publish(_ event: DomainEvent) async throws {
        _ = await server.bus.publish(event)
    }

    public func shutdown() async { await server.stop() }
}

/// A remote local backend (`vortex-realtime serve --admin`) reached over HTTP.
public struct RemoteDrillBackend: DrillBackend {
    /// Its URLs (the admin URL is required).
    public let endpoints: LocalBackendEndpoints
    private let bearerToken: String

    /// Creates a handle on a remote backend with a token for the drill's user.
    public init(endpoints: LocalBackendEndpoints, token: String) {
        self.endpoints = endpoints
        self.bearerToken = token
    }

    public func token(for user: String) throws -> String { bearerToken }

    public func publish(_ event: DomainEvent) async throws {
        guard let admin = endpoints.admin, let url = URL(string: admin + "/events") else {
            throw DrillError.backend("the remote backend has no admin URL (start it with --admin)")
        }
        try await HTTPPost.send(url: url, json: try JSONEncoder().encode(event))
    }

    public func shutdown() async {}
}

/// A drill could not run.
public enum DrillError: Error, Sendable, CustomStringConvertible {
    /// The backend failed or refused.
    case backend(String)
    /// Streams did not get live in time.
    case notLive(String)

    public var description: String {
        switch self {
        case .backend(let detail): "backend: \(detail)"
        case .notLive(let detail): "not live: \(detail)"
        }
    }
}
