import BackendNotifier
import Foundation
import RealtimeTesting
import SubscriberCore
import Testing

@testable import Composition

/// Issue 19: the liveness settings (one set for both transports), the reconnect policy without a silent fallback, and
/// the network path monitor reaching the transports.
@Suite("RealtimeConfiguration: liveness, reconnect, network path")
struct LivenessConfigurationTests {
    static let appsync = "https://abc.appsync-api.us-east-1.amazonaws.com/event"

    @Test("the defaults are the library's: 30 s quiet period, 10 s pong, 3 s probe; reconnect exponential:1:10")
    func defaults() throws {
        let configuration = RealtimeConfiguration()
        #expect(try configuration.liveness.settings == LivenessSettings.default)
        #expect(try configuration.reconnectPolicy == ReconnectPolicy.default)
        #expect(configuration.reconnect == "exponential:1:10")
    }

    @Test("liveness from a file, then the environment; 0 in the environment (null in a file) turns pings off")
    func layering() throws {
        var base = RealtimeConfiguration()
        base.appSyncEndpoint = Self.appsync
        let fromFile = try base.applyingJSON(Data(#"{"liveness":{"quietPeriodSeconds":20,"probeTimeoutSeconds":2.5}}"#.utf8))
        #expect(fromFile.liveness.quietPeriodSeconds == 20)
        #expect(fromFile.liveness.pongTimeoutSeconds == 10, "absent keys keep their values")
        #expect(try fromFile.liveness.settings.probeTimeout == .milliseconds(2500))
        let loaded = try RealtimeConfiguration.load(
            base: fromFile,
            environment: [
                "VORTEX_REALTIME_PONG_TIMEOUT": "4", "VORTEX_REALTIME_QUIET_PERIOD": "0", "VORTEX_REALTIME_WEBSOCKET_PINGS": "off",
            ])
        #expect(
            try loaded.liveness.settings
                == LivenessSettings(quietPeriod: nil, pongTimeout: .seconds(4), probeTimeout: .milliseconds(2500), webSocketPings: false))
        let nulled = try base.applyingJSON(Data(#"{"liveness":{"quietPeriodSeconds":null}}"#.utf8))
        #expect(try nulled.liveness.settings.quietPeriod == nil)
    }

    @Test(
        "keys replaced by the shared liveness settings are named in the error, in files and in the environment",
        arguments: [
            (#"{"graphQLPingIntervalSeconds":15}"#, "\"graphQLPingIntervalSeconds\" was replaced by \"liveness.quietPeriodSeconds\""),
            (#"{"graphQLPongTimeoutSeconds":10}"#, "\"graphQLPongTimeoutSeconds\" was replaced by \"liveness.pongTimeoutSeconds\""),
            (#"{"liveness":{"pingInterval":15}}"#, "unknown key \"liveness.pingInterval\""),
        ])
    func renamedKeys(json: String, problem: String) {
        do {
            _ = try RealtimeConfiguration().applyingJSON(Data(json.utf8))
            Issue.record("accepted \(json)")
        } catch {
            #expect(error.problems.contains { $0.contains(problem) }, "\(error.problems)")
        }
    }

    @Test(
        "invalid liveness values and renamed variables are reported with their key",
        arguments: [
            (
                ["VORTEX_REALTIME_GRAPHQL_PING_INTERVAL": "15"],
                "VORTEX_REALTIME_GRAPHQL_PING_INTERVAL: replaced by VORTEX_REALTIME_QUIET_PERIOD"
            ),
            (["VORTEX_REALTIME_PONG_TIMEOUT": "0"], "liveness.pongTimeoutSeconds: must be above 0"),
            (["VORTEX_REALTIME_PROBE_TIMEOUT": "100000"], "liveness.probeTimeoutSeconds: must be above 0 and at most 86400"),
            (["VORTEX_REALTIME_WEBSOCKET_PINGS": "sometimes"], "VORTEX_REALTIME_WEBSOCKET_PINGS=sometimes: expected on or off"),
        ] as [([String: String], String)])
    func invalidValues(environment: [String: String], problem: String) {
        var full = environment
        full["VORTEX_REALTIME_APPSYNC_ENDPOINT"] = Self.appsync
        do {
            _ = try RealtimeConfiguration.load(environment: full)
            Issue.record("accepted \(environment)")
        } catch {
            #expect(error.problems.contains { $0.contains(problem) }, "\(error.problems)")
        }
    }

    @Test("a malformed reconnect policy is an error that says why, never the default in disguise")
    func malformedReconnect() {
        var configuration = RealtimeConfiguration()
        configuration.appSyncEndpoint = Self.appsync
        configuration.reconnect = "exponential:10:1"
        #expect(
            throws: ConfigurationError([
                "reconnect: \"exponential:10:1\" is not a reconnect policy: BASE must not exceed MAX (the forms: fixed:SECONDS, exponential:BASE:MAX, each optionally followed by :attempts=N; exponential also by :jitter=J before it)"
            ])
        ) {
            try configuration.reconnectPolicy
        }
        // The factory does not build a transport on it either, even from a configuration that skipped validation.
        #expect(throws: ConfigurationError.self) {
            try TransportFactory(configuration: configuration, auth: StaticAuthSessionStub()).make(.appsync)
        }
        do {
            try configuration.validate()
            Issue.record("validate() accepted a malformed policy")
        } catch {
            #expect(
                error.problems.contains {
                    $0.hasPrefix("reconnect: \"exponential:10:1\" is not a reconnect policy: BASE must not exceed MAX")
                })
        }
    }

    @Test("the stack's network path monitor reaches the transport: an interface change probes the open link")
    func pathMonitorReachesTheTransport() async throws {
        var configuration = RealtimeConfiguration()
        configuration.appSyncEndpoint = "http://127.0.0.1:9/event"
        let server = ScriptedWebSocketServer()
        let monitor = DrivenNetworkPathMonitor(.satisfied(.wifi))
        let stack = try RealtimeStack(
            configuration: configuration, auth: ScriptedAuthSession(.bearerToken("jwt")), userId: "u-1", organizationId: "o-1",
            connector: server, networkPathMonitor: monitor)
        let roles = await stack.notifier.roleValues()
        let connection = try await server.nextConnection()
        _ = try await connection.nextSentJSON()
        connection.emit(#"{"type":"connection_ack"}"#)
        try await connection.waitForPings(1)
        monitor.update(.satisfied(.cellular))
        try await connection.waitForPings(2)
        _ = roles
        await stack.shutdown()
    }
}
