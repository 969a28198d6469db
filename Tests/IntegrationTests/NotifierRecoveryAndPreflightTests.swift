import BackendNotifier
import Composition
import Foundation
import LocalBackend
import RealtimeDrill
import RealtimePreflight
import RealtimeTesting
import SubscriberCore
import Testing

/// Issue 10 over real sockets against the local backend: the README's recovery recipe on both transports, and
/// preflight on both transports.
@Suite("Recovery and preflight against the local backend", .serialized, .timeLimit(.minutes(3)))
struct NotifierRecoveryAndPreflightTests {
    /// An auth session whose token the test replaces ("the app signs in again").
    final class SwitchableAuth: AuthSession {
        private let token: Locked<String>
        init(_ token: String) { self.token = Locked(token) }
        func set(_ token: String) { self.token.withLock { $0 = token } }
        func isSignedIn() async -> Bool { true }
        func credentials(forceRefresh: Bool) async throws -> AuthCredentials { .bearerToken(token.withLock { $0 }) }
    }

    @Test(
        "values, token revoked, one sessionExpired, sign in again + update(same identity): values flow again",
        arguments: RealtimeConfiguration.TransportKind.allCases)
    func recoveryRecipe(kind: RealtimeConfiguration.TransportKind) async throws {
        let backend = try await EmbeddedDrillBackend.start()
        var configuration = RealtimeConfiguration()
        configuration.transport = kind
        configuration.appSyncEndpoint = backend.endpoints.http
        configuration.graphQLEndpoint = backend.endpoints.graphql
        configuration.reconnect = "fixed:0.2"
        let auth = SwitchableAuth(try backend.token(for: DrillScript.user))
        let stack = try RealtimeStack(
            configuration: configuration, auth: auth, userId: DrillScript.user, organizationId: DrillScript.organization)
        let events = ValueRecorder(await stack.notifier.connectionEvents())
        let roles = ValueRecorder(await stack.notifier.roleValues())
        @Sendable func publishRole(_ reason: String) async throws {
            _ = await backend.server.bus.publish(
                DomainEvent(kind: .roleChanged, userId: DrillScript.user, payload: ["reason": .string(reason)]))
        }
        try await roles.waitUntil(timeout: 10, poll: { try await publishRole("before") }) { $0.contains { $0.reason == "before" } }

        backend.server.faults.expireTokens()
        _ = backend.server.faults.closeAllConnections(code: 1000)
        try await events.waitUntil(timeout: 15) { $0.contains(.sessionExpired) }

        // The app signs the user in again and calls update with the same identity.
        backend.server.faults.reset()
        auth.set(try backend.token(for: DrillScript.user))
        await stack.notifier.update(userId: DrillScript.user, organizationId: DrillScript.organization)
        try await roles.waitUntil(timeout: 15, poll: { try await publishRole("after") }) { $0.contains { $0.reason == "after" } }
        try await events.waitUntil(timeout: 1) { $0.filter { $0 == .sessionExpired }.count == 1 }
        await stack.shutdown()
        await backend.shutdown()
    }

    @Test("preflight: the default GraphQL documents and the drill's operations check out; a field the server lacks is named")
    func graphQLPreflight() async throws {
        let backend = try await EmbeddedDrillBackend.start()
        var configuration = RealtimeConfiguration()
        configuration.transport = .graphql
        configuration.graphQLEndpoint = backend.endpoints.graphql
        let auth = StaticAuthSession(.bearerToken(try backend.token(for: DrillScript.user)))
        let defaults = await RealtimePreflight(
            configuration: configuration, auth: auth, userId: DrillScript.user, organizationId: DrillScript.organization
        )
        .run(.graphql)
        #expect(defaults.passed, "\(defaults)")
        #expect(defaults.checks.map(\.name) == ["connection_init", "introspection"] + NotifierUpstream.allCases.map(\.rawValue))
        configuration.graphQLOperations = DrillScript.graphQLOperations
        configuration.graphQLOperations?["device"] = .init(query: "subscription { subscribeDeviceState(site: \"s\") { mac colour } }")
        let broken = await RealtimePreflight(
            configuration: configuration, auth: auth, userId: DrillScript.user, organizationId: DrillScript.organization
        )
        .run(.graphql)
        #expect(!broken.passed)
        #expect(
            broken.checks.first { $0.name == "device" }?.problems == [
                "missing argument: Subscription.subscribeDeviceState(site:)", "missing field: DeviceStateOutput.colour",
            ])
        #expect(broken.checks.filter { $0.name != "device" }.allSatisfy { $0.passed })
        await backend.shutdown()
    }

    @Test("preflight: the five AppSync channels subscribe; another user's token fails every one of them")
    func appSyncPreflight() async throws {
        let backend = try await EmbeddedDrillBackend.start()
        var configuration = RealtimeConfiguration()
        configuration.appSyncEndpoint = backend.endpoints.http
        let good = await RealtimePreflight(
            configuration: configuration, auth: StaticAuthSession(.bearerToken(try backend.token(for: DrillScript.user))),
            userId: DrillScript.user, organizationId: DrillScript.organization
        ).run(.appsync)
        #expect(good.passed, "\(good)")
        #expect(good.checks.count == 5)
        let other = await RealtimePreflight(
            configuration: configuration, auth: StaticAuthSession(.bearerToken(try backend.token(for: "u-2"))),
            userId: DrillScript.user, organizationId: DrillScript.organization
        ).run(.appsync)
        #expect(!other.passed)
        #expect(other.checks.allSatisfy { !$0.passed })
        await backend.shutdown()
    }
}
