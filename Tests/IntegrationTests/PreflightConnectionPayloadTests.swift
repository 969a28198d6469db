import BackendNotifier
import Composition
import Foundation
import LocalBackend
import RealtimeDrill
import RealtimePreflight
import SubscriberCore
import Testing

/// Issue 20 item 4 over real sockets: preflight connects with the configured `connection_init` payload and checks the
/// configured documents' variables against the local backend's schema (its subscriptions take `orgId: String` and
/// `userId: String`).
@Suite("Preflight: connection_init payload and variables against the local backend", .serialized, .timeLimit(.minutes(3)))
struct PreflightConnectionPayloadTests {
    static func preflight(_ backend: StagingLikeBackend, _ adjust: (inout RealtimeConfiguration) -> Void) async throws -> PreflightReport {
        var configuration = RealtimeConfiguration()
        configuration.transport = .graphql
        configuration.graphQLEndpoint = backend.endpoints.graphql
        adjust(&configuration)
        try configuration.validate()
        return await RealtimePreflight(
            configuration: configuration, auth: StaticAuthSession(.bearerToken(try backend.token())), userId: "u-7", organizationId: "o-7"
        ).run(.graphql)
    }

    @Test("a payload shape the server reads is acknowledged; one it does not read is reported with the close code")
    func payloadShapes() async throws {
        let backend = try await StagingLikeBackend.start(admin: false)
        let accepted = try await Self.preflight(backend) {
            $0.graphQLConnectionPayload = #"{"authorization":"${token}","client":"vortex"}"#
        }
        #expect(accepted.passed, "\(accepted)")
        #expect(accepted.checks.first == PreflightReport.Check(name: "connection_init", problems: []))
        let refused = try await Self.preflight(backend) {
            $0.graphQLConnectionPayload = #"{"headers":{"Authorization":"Bearer ${token}"}}"#
        }
        await backend.stop()
        #expect(!refused.passed)
        #expect(refused.checks.map(\.name) == ["connection_init"], "nothing else can be checked before connection_ack")
        let problem = try #require(refused.checks.first?.problems.first)
        #expect(problem.contains("refused: the server closed the connection with 4403 Forbidden"), "\(problem)")
        #expect(!problem.contains(try backend.token()))
    }

    @Test("a variable declared with a type the schema's argument does not take is named")
    func variableTypes() async throws {
        let backend = try await StagingLikeBackend.start(admin: false)
        let report = try await Self.preflight(backend) {
            $0.graphQLOperations = [
                "role": .init(query: "subscription R($userId: ID!) { subscribeRoleChange(userId: $userId) { reason } }"),
                "device": .init(query: "subscription D($orgId: String) { subscribeDeviceState(orgId: $orgId) { mac online } }"),
                "archive": .init(query: "subscription A($orgId: Int) { subscribeArchiveState(orgId: $orgId) { mac } }"),
            ]
        }
        await backend.stop()
        let problems = Dictionary(uniqueKeysWithValues: report.checks.map { ($0.name, $0.problems) })
        #expect(problems["connection_init"] == [])
        #expect(problems["device"] == [])
        #expect(problems["role"] == ["variable $userId: declared ID!, but Subscription.subscribeRoleChange(userId:) expects String"])
        #expect(
            problems["archive"] == [
                "variable $orgId: Int cannot hold the identity the notifier sends (a string)",
                "variable $orgId: declared Int, but Subscription.subscribeArchiveState(orgId:) expects String",
            ])
        #expect(!report.passed)
    }
}
