import BackendNotifier
import Composition
import Foundation
import LocalBackend
import RealtimeDrill
import RealtimeTesting
import SubscriberCore
import Testing

/// The notifier end to end over real sockets against the local backend: parity of the two transports, the rollback
/// drill, and automatic failover and failback.
@Suite("Notifier against the local backend", .serialized, .timeLimit(.minutes(3)))
struct NotifierParityAndRollbackTests {
    @Test("parity: every stream of both APIs yields identical values on AppSync Events and on GraphQL")
    func parity() async throws {
        let backend = try await EmbeddedDrillBackend.start()
        let report = try await DrillRunner(backend: backend).runParity(events: 30)
        await backend.shutdown()
        for stream in report.streams {
            #expect(stream.published > 0, "\(stream.stream) published nothing")
            #expect(stream.appsync == stream.published, "\(stream.stream): appsync \(stream.appsync)/\(stream.published)")
            #expect(stream.graphql == stream.published, "\(stream.stream): graphql \(stream.graphql)/\(stream.published)")
            #expect(stream.identical, "\(stream.stream): \(stream.difference ?? "")")
        }
        #expect(report.streams.count == 11)
    }

    @Test("rollback drill: AppSync -> GraphQL -> AppSync mid-stream; nothing lost outside the windows, nothing twice")
    func rollbackDrill() async throws {
        let backend = try await EmbeddedDrillBackend.start()
        let report = try await DrillRunner(backend: backend).runRollback(events: 60, interval: .milliseconds(5))
        await backend.shutdown()
        #expect(report.switches.map { "\($0.from)->\($0.to)" } == ["appsync->graphql", "graphql->appsync"])
        #expect(report.switches.allSatisfy { !$0.windowStart.isEmpty && !$0.windowEnd.isEmpty })
        for stream in report.streams {
            #expect(stream.missingOutsideWindows == 0, "\(stream.stream) lost \(stream.missingOutsideWindows) outside the windows")
            #expect(stream.duplicated == 0, "\(stream.stream) duplicated \(stream.duplicated)")
            #expect(stream.received > 0, "\(stream.stream) received nothing")
        }
        #expect(report.passed)
    }

    @Test("failover: an AppSync outage moves the notifier to GraphQL, events keep flowing, and it fails back once healthy")
    func failoverAndFailback() async throws {
        let backend = try await EmbeddedDrillBackend.start()
        var configuration = RealtimeConfiguration()
        configuration.appSyncEndpoint = backend.endpoints.http
        configuration.graphQLEndpoint = backend.endpoints.graphql
        configuration.reconnect = "fixed:0.2"
        configuration.failover.enabled = true
        configuration.failover.unhealthyAfterSeconds = 1
        configuration.failover.failbackAfterSeconds = 1
        let token = try backend.token(for: DrillScript.user)
        let stack = try RealtimeStack(
            configuration: configuration, auth: StaticAuthSession(.bearerToken(token)), userId: DrillScript.user,
            organizationId: DrillScript.organization)
        let events = ValueRecorder(await stack.notifier.connectionEvents())
        let roles = ValueRecorder(await stack.notifier.roleValues())
        await stack.startFailover()
        try await events.waitUntil(timeout: 10) { $0.contains { if case .live(stream: "role", _) = $0 { true } else { false } } }

        @Sendable func publishRole(_ reason: String) async throws {
            _ = await backend.server.bus.publish(
                DomainEvent(kind: .roleChanged, userId: DrillScript.user, payload: ["reason": .string(reason)]))
        }
        try await publishRole("before")
        try await roles.waitUntil(timeout: 5) { $0.contains { $0.reason == "before" } }

        backend.server.faults.setOutage(of: .appSyncEvents, true)
        try await events.waitUntil(timeout: 15) {
            $0.contains { event in
                if case .transportSwitched(from: "appsync", to: "graphql", _, .failover) = event { true } else { false }
            }
        }
        #expect(await stack.activeKind == .graphql)
        // GraphQL has no subscribe acknowledgement: publish until the server has registered the subscription.
        try await roles.waitUntil(timeout: 10, poll: { try await publishRole("during") }) { $0.contains { $0.reason == "during" } }

        backend.server.faults.setOutage(of: .appSyncEvents, false)
        try await events.waitUntil(timeout: 15) {
            $0.contains { event in
                if case .transportSwitched(from: "graphql", to: "appsync", _, .failback) = event { true } else { false }
            }
        }
        #expect(await stack.activeKind == .appsync)
        try await roles.waitUntil(timeout: 10, poll: { try await publishRole("after") }) { $0.contains { $0.reason == "after" } }
        await stack.shutdown()
        await backend.shutdown()
    }

    @Test("failover follows a manual switch: an outage of the transport the app switched to fails over from it")
    func failoverAfterAManualSwitch() async throws {
        let backend = try await EmbeddedDrillBackend.start()
        var configuration = RealtimeConfiguration()
        configuration.appSyncEndpoint = backend.endpoints.http
        configuration.graphQLEndpoint = backend.endpoints.graphql
        configuration.reconnect = "fixed:0.2"
        configuration.failover.enabled = true
        configuration.failover.unhealthyAfterSeconds = 1
        configuration.failover.failbackAfterSeconds = 1
        let token = try backend.token(for: DrillScript.user)
        let stack = try RealtimeStack(
            configuration: configuration, auth: StaticAuthSession(.bearerToken(token)), userId: DrillScript.user,
            organizationId: DrillScript.organization)
        let events = ValueRecorder(await stack.notifier.connectionEvents())
        let roles = ValueRecorder(await stack.notifier.roleValues())
        await stack.startFailover()
        try await events.waitUntil(timeout: 10) { $0.contains { if case .live(stream: "role", _) = $0 { true } else { false } } }
        try await stack.switchTransport(to: .graphql)
        #expect(await stack.activeKind == .graphql)

        backend.server.faults.setOutage(of: .graphQL, true)
        try await events.waitUntil(timeout: 15) {
            $0.contains { event in
                if case .transportSwitched(from: "graphql", to: "appsync", _, .failover) = event { true } else { false }
            }
        }
        #expect(await stack.activeKind == .appsync)
        try await roles.waitUntil(
            timeout: 10,
            poll: {
                _ = await backend.server.bus.publish(
                    DomainEvent(kind: .roleChanged, userId: DrillScript.user, payload: ["reason": .string("after")]))
            }
        ) { $0.contains { $0.reason == "after" } }
        await stack.shutdown()
        await backend.shutdown()
    }
}

/// Records a stream's values for polling assertions.
final class ValueRecorder<Value: Sendable>: Sendable {
    private let values = Locked<[Value]>([])
    private let task: Task<Void, Never>

    init(_ stream: AsyncStream<Value>) {
        let values = self.values
        task = Task { for await value in stream { values.withLock { $0.append(value) } } }
    }

    deinit { task.cancel() }

    /// The values so far.
    var recorded: [Value] { values.withLock { $0 } }

    /// Waits until `condition` holds over the values so far, running `poll` between checks.
    func waitUntil(
        timeout: Double, poll: @escaping @Sendable () async throws -> Void = {}, _ condition: @escaping @Sendable ([Value]) -> Bool
    ) async throws {
        try await withTestTimeout(timeout, "a condition on the recorded values") { [values] in
            while !condition(values.withLock { $0 }) {
                try await poll()
                try await Task.sleep(for: .milliseconds(50))
            }
        }
    }
}
