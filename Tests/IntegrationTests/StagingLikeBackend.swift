import BackendNotifier
import Composition
import Foundation
import LocalBackend
import RealtimeDrill
import SubscriberCore
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The local backend (`serve`-equivalent, in-process) as a stand-in for staging: a directory without the sample users,
/// admin endpoints only when a test's trigger needs them, and a token for the non-sample identity.
struct StagingLikeBackend {
    /// The drill's identity: not in the sample directory.
    static let identity = DrillIdentity(user: "u-7", organization: "o-7", deviceGroup: "g-7")
    /// u-7 sees g-7; u-8 (same organization) sees g-8 only.
    static let directory = UserDirectory(users: [
        DirectoryUser(id: "u-7", organizationId: "o-7", role: "member", deviceGroups: ["g-7"]),
        DirectoryUser(id: "u-8", organizationId: "o-7", role: "member", deviceGroups: ["g-8"]),
    ])

    let server: LocalBackendServer
    let endpoints: LocalBackendEndpoints
    let secret: String

    /// Starts a backend; `admin` turns on `POST /vortex/events` (for a trigger script, never for the drill itself).
    static func start(admin: Bool) async throws -> StagingLikeBackend {
        let secret = (0..<4).map { _ in UUID().uuidString }.joined()
        var configuration = LocalBackendConfiguration()
        configuration.jwtSecret = secret
        configuration.admin = admin
        configuration.directory = directory
        let server = LocalBackendServer(configuration: configuration)
        return StagingLikeBackend(server: server, endpoints: try await server.start(), secret: secret)
    }

    func token(for user: String = identity.user) throws -> String {
        try DevelopmentToken.make(secret: secret, user: user, ttl: .seconds(3600))
    }

    /// The target as staging would be given: both endpoints, a token, the identity, the default GraphQL documents.
    func target() throws -> DrillTarget {
        var configuration = RealtimeConfiguration()
        configuration.appSyncEndpoint = endpoints.http
        configuration.graphQLEndpoint = endpoints.graphql
        configuration.reconnect = "fixed:0.5"
        return DrillTarget(configuration: configuration, auth: StaticAuthSession(.bearerToken(try token())), identity: Self.identity)
    }

    /// Publishes the drill's event number `index` of `kind` for the identity on `protocols`, in-process.
    @discardableResult
    func publish(
        _ index: Int, _ kind: VortexEventKind, on protocols: Set<ConnectionRegistry.Kind> = [.appSyncEvents, .graphQL]
    ) async
        -> FanOutSummary
    {
        let stamp = ISO8601Timestamp.string(from: Date(), fractionalSeconds: true)
        return await server.bus.publish(DrillScript.event(index, kind: kind, timestamp: stamp, identity: Self.identity), on: protocols)
    }

    /// `POST /vortex/events` with `body`; returns the HTTP status.
    func postEvent(_ body: String) async throws -> Int {
        let admin = try #require(endpoints.admin, "admin endpoints are off")
        var request = URLRequest(url: try #require(URL(string: admin + "/events")))
        request.httpMethod = "POST"
        request.httpBody = Data(body.utf8)
        request.setValue("application/json", forHTTPHeaderField: "content-type")
        let (_, response) = try await URLSession.shared.data(for: request)
        return (response as? HTTPURLResponse)?.statusCode ?? 0
    }

    func stop() async { await server.stop() }

    /// `scripts/drill-trigger-local.sh` of this checkout.
    static var triggerScript: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("scripts/drill-trigger-local.sh").path
    }

    /// Whether curl (the trigger script's HTTP client) is installed.
    static var hasCurl: Bool {
        (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").contains {
            FileManager.default.isExecutableFile(atPath: "\($0)/curl")
        }
    }
}

/// Publishes `kinds` in turn every `interval` until cancelled: natural traffic the drill did not cause.
func naturalTraffic(_ backend: StagingLikeBackend, kinds: [VortexEventKind], interval: Duration) -> Task<Void, Never> {
    Task {
        var index = 0
        while !Task.isCancelled {
            await backend.publish(index, kinds[index % kinds.count])
            index += 1
            try? await Task.sleep(for: interval)
        }
    }
}
