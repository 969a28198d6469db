import BackendNotifier
import Composition
import Foundation
import LocalBackend
import RealtimeDrill
import RealtimeTesting
import SubscriberCore
import Testing

/// Issue 20 item 3 over real sockets: planned switches AppSync -> GraphQL -> AppSync while the local backend publishes
/// 200 events/s (each domain event on both protocols); nothing is lost, nothing repeated, and each switch reports an
/// empty window.
@Suite("Planned switch against the local backend", .serialized, .timeLimit(.minutes(3)))
struct NotifierPlannedSwitchTests {
    @Test("AppSync -> GraphQL -> AppSync at 200 events/s: every event once, in order; both windows empty")
    func plannedSwitchesUnderTraffic() async throws {
        let backend = try await EmbeddedDrillBackend.start()
        var configuration = RealtimeConfiguration()
        configuration.appSyncEndpoint = backend.endpoints.http
        configuration.graphQLEndpoint = backend.endpoints.graphql
        configuration.reconnect = "fixed:0.2"
        // Documents that select `timestamp`, so an event's identity is exact on both protocols.
        configuration.graphQLOperations = DrillScript.graphQLOperations
        let stack = try RealtimeStack(
            configuration: configuration, auth: StaticAuthSession(.bearerToken(try backend.token(for: DrillScript.user))),
            userId: DrillScript.user, organizationId: DrillScript.organization)
        let events = ValueRecorder(await stack.notifier.connectionEvents())
        let presence = ValueRecorder(await stack.notifier.devicePresenceValues())
        let roles = ValueRecorder(await stack.notifier.roleValues())
        try await events.waitUntil(timeout: 15) { received in
            ["device", "role"].allSatisfy { stream in
                received.contains { if case .live(stream, _) = $0 { true } else { false } }
            }
        }

        // The publisher: 200 events/s, presence and roles alternating, each with a unique, increasing timestamp.
        let start = Date()
        let stop = Locked(false)
        let publishedCount = Locked(0)
        let publisher = Task { () -> [DomainEvent] in
            var published: [DomainEvent] = []
            var index = 0
            while !stop.withLock({ $0 }) {
                let stamp = ISO8601Timestamp.string(from: start.addingTimeInterval(Double(index) / 1000), fractionalSeconds: true)
                let event = DrillScript.event(index, kind: index % 2 == 0 ? .devicePresence : .roleChanged, timestamp: stamp)
                _ = await backend.server.bus.publish(event)
                published.append(event)
                index += 1
                publishedCount.withLock { $0 = index }
                try? await Task.sleep(for: .milliseconds(5))
            }
            return published
        }
        // Traffic before, between and after the switches: at least 100 events each time, however slow the machine.
        func published(atLeast count: Int) async throws {
            try await withTestTimeout(30, "\(count) events published") {
                while publishedCount.withLock({ $0 }) < count { try await TestTime.pollPause() }
            }
        }
        try await published(atLeast: 100)
        try await stack.switchTransport(to: .graphql)
        #expect(await stack.activeKind == .graphql)
        let afterFirst = publishedCount.withLock { $0 }
        try await published(atLeast: afterFirst + 100)
        try await stack.switchTransport(to: .appsync)
        #expect(await stack.activeKind == .appsync)
        let afterSecond = publishedCount.withLock { $0 }
        try await published(atLeast: afterSecond + 100)
        stop.withLock { $0 = true }
        let published = try await publisher.boundedValue()

        let presenceStamps = published.filter { $0.kind == .devicePresence }.compactMap(\.timestamp)
        let roleStamps = published.filter { $0.kind == .roleChanged }.compactMap(\.timestamp)
        try await presence.waitUntil(timeout: 15) { $0.count >= presenceStamps.count }
        try await roles.waitUntil(timeout: 15) { $0.count >= roleStamps.count }
        try await events.waitUntil(timeout: 5) { received in
            received.filter { if case .transportSwitched = $0 { true } else { false } }.count == 2
        }
        await stack.shutdown()
        await backend.shutdown()

        #expect(presence.recorded.compactMap(\.timestamp) == presenceStamps, "presence: each event once, in order")
        #expect(roles.recorded.compactMap(\.timestamp) == roleStamps, "roles: each event once, in order")
        let switches = events.recorded.compactMap { event -> (String, GapWindow, TransportSwitchReason)? in
            if case .transportSwitched(let from, let to, let gap, let reason) = event { return ("\(from)->\(to)", gap, reason) }
            return nil
        }
        #expect(switches.map(\.0) == ["appsync->graphql", "graphql->appsync"])
        #expect(switches.allSatisfy { $0.1.duration == 0 && $0.2 == .requested }, "\(switches.map(\.1))")
        #expect(!events.recorded.contains { if case .eventsLost = $0 { true } else { false } })
    }

}
