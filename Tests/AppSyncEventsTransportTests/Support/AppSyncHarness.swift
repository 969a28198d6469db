import Foundation
import Logging
import RealtimeTesting
import SubscriberCore
import Testing

@testable import AppSyncEventsTransport

/// A transport wired to the scripted server, a manual clock and deterministic ids (`id-1`, `id-2`, ...); reconnects
/// after a fixed 10 s unless a test configures otherwise. The server answers pings at once unless told otherwise.
struct AppSyncHarness {
    static let endpointText = "https://abc.appsync-api.us-east-1.amazonaws.com/event"
    let server = ScriptedWebSocketServer()
    let clock = ManualClock()
    let auth: ScriptedAuthSession
    let transport: AppSyncEventsTransport

    init(
        auth: ScriptedAuthSession = ScriptedAuthSession(.bearerToken("jwt-1")),
        logHandler: (any LogHandler)? = nil,
        configure: (inout AppSyncEventsConfiguration) -> Void = { _ in }
    ) throws {
        var configuration = AppSyncEventsConfiguration(endpoint: try AppSyncEndpoint(Self.endpointText))
        // The tests' timelines were written for a fixed 10 s backoff (the default before the jittered one).
        configuration.link.reconnectPolicy = .fixed(.seconds(10))
        configure(&configuration)
        let counter = Locked(0)
        let clock = self.clock
        var logger = Logger(label: "test.appsync")
        if let logHandler {
            logger = Logger(label: "test.appsync") { _ in logHandler }
            logger.logLevel = .trace
        }
        self.auth = auth
        self.transport = AppSyncEventsTransport(
            configuration: configuration, auth: auth, connector: server, clock: clock,
            wallClock: WallClock { Date(timeIntervalSince1970: 1_700_000_000 + Double(clock.now.offset.components.seconds)) },
            logger: logger,
            makeID: {
                counter.withLock { value in
                    value += 1
                    return "id-\(value)"
                }
            })
    }

    /// Takes the next connection, checks that it starts with `connection_init`, and acknowledges it.
    func acceptConnection(timeoutMs: Int? = nil) async throws -> ScriptedConnection {
        let connection = try await server.nextConnection()
        let first = try await connection.nextSentJSON()
        #expect(first["type"] as? String == "connection_init")
        if let timeoutMs {
            connection.emit(#"{"type":"connection_ack","connectionTimeoutMs":\#(timeoutMs)}"#)
        } else {
            connection.emit(#"{"type":"connection_ack"}"#)
        }
        return connection
    }

    /// Subscribes and returns a probe reading the stream.
    func subscribe(_ channel: String) async -> SubscriptionProbe {
        SubscriptionProbe(await transport.subscribe(.channel(channel)))
    }

    /// Reads the next frame, expecting a `subscribe`, and returns its id.
    static func expectSubscribe(on connection: ScriptedConnection, channel: String) async throws -> String {
        let frame = try await connection.nextSentJSON()
        #expect(frame["type"] as? String == "subscribe")
        #expect(frame["channel"] as? String == channel)
        return try #require(frame["id"] as? String)
    }

    /// A `data` frame carrying `event` (a JSON text) the way the service encodes it: as a JSON string.
    static func dataFrame(id: String, event: String) -> String {
        #"{"type":"data","id":"\#(id)","event":\#(JSONString.quoted(event))}"#
    }
}
