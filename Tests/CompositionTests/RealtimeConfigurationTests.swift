import BackendNotifier
import Foundation
import SubscriberCore
import Testing

@testable import Composition

@Suite("RealtimeConfiguration")
struct RealtimeConfigurationTests {
    static let appsync = "https://abc.appsync-api.us-east-1.amazonaws.com/event"
    static let graphql = "wss://api.example.com/graphql"

    @Test("code < file < environment, then validated")
    func layering() throws {
        var base = RealtimeConfiguration()
        base.appSyncEndpoint = Self.appsync
        base.bufferLimit = 10
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("rt-\(UUID().uuidString).json")
        try Data(#"{"transport":"graphql","graphQLEndpoint":"\#(Self.graphql)","bufferLimit":20,"failover":{"maxFailures":9}}"#.utf8).write(
            to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let loaded = try RealtimeConfiguration.load(
            base: base, file: file.path,
            environment: ["VORTEX_REALTIME_BUFFER_LIMIT": "30", "VORTEX_REALTIME_RECONNECT": "exponential:1:30"])
        #expect(loaded.transport == .graphql)
        #expect(loaded.appSyncEndpoint == Self.appsync)
        #expect(loaded.graphQLEndpoint == Self.graphql)
        #expect(loaded.bufferLimit == 30)
        #expect(loaded.failover.maxFailures == 9)
        #expect(loaded.failover.unhealthyAfterSeconds == 60)
        #expect(try loaded.reconnectPolicy == .exponential(base: .seconds(1), max: .seconds(30)))
        #expect(loaded.notifierConfiguration.bufferPolicy.limit == 30)
    }

    @Test("the switch's settle time is a setting: default 0.5 s, from a file or the environment, into the notifier's")
    func switchSettle() throws {
        var base = RealtimeConfiguration()
        base.appSyncEndpoint = Self.appsync
        #expect(base.notifierConfiguration.switchSettle == .milliseconds(500))
        let loaded = try RealtimeConfiguration.load(base: base, environment: ["VORTEX_REALTIME_SWITCH_SETTLE": "1.25"])
        #expect(loaded.notifierConfiguration.switchSettle == .milliseconds(1250))
        #expect(throws: ConfigurationError.self) {
            try RealtimeConfiguration.load(base: base, environment: ["VORTEX_REALTIME_SWITCH_SETTLE": "-1"])
        }
    }

    @Test(
        "missing and contradictory values are all reported, each naming its key",
        arguments: [
            ([:], ["appSyncEndpoint: required for transport appsync"]),
            (["VORTEX_REALTIME_TRANSPORT": "graphql"], ["graphQLEndpoint: required for transport graphql"]),
            (
                ["VORTEX_REALTIME_APPSYNC_ENDPOINT": appsync, "VORTEX_REALTIME_FAILOVER": "on"],
                ["graphQLEndpoint: required because failover is on"]
            ),
            (
                ["VORTEX_REALTIME_APPSYNC_ENDPOINT": appsync, "VORTEX_REALTIME_AUTH_MODE": "apiKey"],
                ["apiKey: required when authMode is apiKey"]
            ),
            (["VORTEX_REALTIME_APPSYNC_ENDPOINT": appsync, "VORTEX_REALTIME_API_KEY": "k"], ["apiKey: given, but authMode is session"]),
            (["VORTEX_REALTIME_APPSYNC_ENDPOINT": "http://example.com/event"], ["appSyncEndpoint: invalid endpoint"]),
            (
                ["VORTEX_REALTIME_TRANSPORT": "graphql", "VORTEX_REALTIME_GRAPHQL_ENDPOINT": "ws://example.com/graphql"],
                ["graphQLEndpoint: "]
            ),
            (["VORTEX_REALTIME_APPSYNC_ENDPOINT": appsync, "VORTEX_REALTIME_RECONNECT": "often"], ["reconnect: \"often\""]),
            (["VORTEX_REALTIME_TRANSPORT": "mqtt"], ["VORTEX_REALTIME_TRANSPORT=mqtt: expected appsync or graphql"]),
            (["VORTEX_REALTIME_BUFFER_LIMIT": "-3"], ["VORTEX_REALTIME_BUFFER_LIMIT=-3: not a non-negative number"]),
        ] as [([String: String], [String])])
    func validation(environment: [String: String], expected: [String]) {
        do {
            _ = try RealtimeConfiguration.load(environment: environment)
            Issue.record("expected a ConfigurationError")
        } catch {
            for fragment in expected {
                #expect(error.problems.contains { $0.hasPrefix(fragment) || $0.contains(fragment) }, "\(error.problems) lacks \(fragment)")
            }
        }
    }

    @Test("files: unknown keys, wrong types and unreadable paths are errors")
    func fileErrors() throws {
        let base = RealtimeConfiguration()
        #expect(throws: ConfigurationError.self) { try base.applyingJSON(Data(#"{"transprot":"graphql"}"#.utf8)) }
        #expect(throws: ConfigurationError.self) { try base.applyingJSON(Data(#"{"bufferLimit":"many"}"#.utf8)) }
        #expect(throws: ConfigurationError.self) { try base.applyingJSON(Data(#"{"failover":{"enabeld":true}}"#.utf8)) }
        #expect(throws: ConfigurationError.self) { try base.applyingJSON(Data("[1]".utf8)) }
        #expect(throws: ConfigurationError.self) { try base.applyingFile("/nonexistent/realtime.json") }
        let configured = try base.applyingJSON(Data(#"{"transport":"graphql","failover":{"enabled":true}}"#.utf8))
        #expect(configured.transport == .graphql && configured.failover.enabled)
    }

    @Test("the factory builds the transport of each kind with the configured settings")
    func factory() throws {
        var configuration = RealtimeConfiguration()
        configuration.appSyncEndpoint = Self.appsync
        configuration.graphQLEndpoint = Self.graphql
        let factory = TransportFactory(configuration: configuration, auth: StaticAuthSessionStub())
        #expect(try factory.make(.appsync).name == "appsync")
        #expect(try factory.make(.graphql).name == "graphql")
        #expect(try factory.make(.graphql).dialect == .graphQL)
        configuration.graphQLEndpoint = nil
        #expect(throws: ConfigurationError.self) {
            try TransportFactory(configuration: configuration, auth: StaticAuthSessionStub()).make(.graphql)
        }
    }
}

struct StaticAuthSessionStub: AuthSession {
    func isSignedIn() async -> Bool { true }
    func credentials(forceRefresh: Bool) async throws -> AuthCredentials { .bearerToken("t") }
}
