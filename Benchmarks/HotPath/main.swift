// Hot-path benchmark: frame in -> consumer's `for await`, for AppSyncEventsTransport, against bare WSClient frame
// reception of the same frames from the same server in the same run. Run: swift run -c release HotPathBenchmark [N]
import AppSyncEventsTransport
import Foundation
import HTTPTypes
import LocalBackend
import Logging
import NIOWebSocket
import SubscriberCore
import WSClient
import WebSocketNIO

@main
struct HotPathBenchmark {
    static func main() async throws {
        let count = CommandLine.arguments.dropFirst().first.flatMap(Int.init) ?? 20_000
        var configuration = LocalBackendConfiguration()
        configuration.apiKeys = ["bench-key"]
        let server = LocalBackendServer(configuration: configuration, logger: Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() })
        let endpoints = try await server.start()
        let endpoint = try AppSyncEndpoint(endpoints.http)
        let channel = "default/bench"
        let event =
            #"{"eventType":"device/presenceChanged","timestamp":"2026-11-22T05:00:00.000Z","orgId":"o-1","siteId":"g-1","thingName":"thing-7","derivant":"VX-100","mac":"00:1A:2B:3C:4D:5E","online":true}"#
        print("events: \(count), event size: \(event.utf8.count) bytes, frame size: ~\(event.utf8.count + 80) bytes")

        for round in 1...3 {
            let bare = try await bareWSClient(endpoint: endpoint, channel: channel, count: count, server: server, event: event)
            let transport = try await appSyncTransport(endpoint: endpoint, channel: channel, count: count, server: server, event: event)
            print(
                String(
                    format: "round %d: bare WSClient %.0f events/s, AppSyncEventsTransport %.0f events/s (%.2fx the bare time)",
                    round, Double(count) / bare, Double(count) / transport, transport / bare))
        }
        await server.stop()
    }

    /// Publishes `count` events in bursts of five (the service's maximum per publish).
    static func publish(_ count: Int, to channel: String, server: LocalBackendServer, event: String) async {
        var sent = 0
        while sent < count {
            let burst = min(5, count - sent)
            _ = await server.bus.publish(channel: channel, events: Array(repeating: event, count: burst))
            sent += burst
        }
    }

    /// Seconds from the first publish until the consumer has received every event.
    static func appSyncTransport(
        endpoint: AppSyncEndpoint, channel: String, count: Int, server: LocalBackendServer, event: String
    ) async throws -> Double {
        var configuration = AppSyncEventsConfiguration(endpoint: endpoint)
        configuration.link.subscriptionBufferLimit = count + 10
        let transport = AppSyncEventsTransport(
            configuration: configuration, auth: StaticAuthSession(.apiKey("bench-key")), connector: NIOWebSocketConnector(),
            logger: Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() })
        var iterator = await transport.subscribe(.channel(channel)).makeAsyncIterator()
        guard case .live? = try await iterator.next() else { fatalError("not live") }
        let start = ContinuousClock.now
        async let publishing: Void = publish(count, to: channel, server: server, event: event)
        var received = 0
        var bytes = 0
        while received < count, let next = try await iterator.next() {
            if case .payload(let payload) = next {
                received += 1
                bytes &+= payload.json.count
            }
        }
        await publishing
        let elapsed = ContinuousClock.now - start
        await transport.disconnect()
        precondition(bytes > 0)
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    /// The same frames read with bare WSClient: no JSON work at all, only counting `data` frames.
    static func bareWSClient(
        endpoint: AppSyncEndpoint, channel: String, count: Int, server: LocalBackendServer, event: String
    ) async throws -> Double {
        let authorizer = AppSyncAuthorizer(endpoint: endpoint, credentials: .apiKey("bench-key"))
        var wsConfiguration = WebSocketClientConfiguration(maxFrameSize: 1 << 20)
        wsConfiguration.additionalHeaders[.secWebSocketProtocol] = authorizer.subprotocols().joined(separator: ", ")
        let elapsed = Locked(0.0)
        try await WebSocketClient.connect(
            url: endpoint.realtimeURL.absoluteString, configuration: wsConfiguration,
            logger: Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() }
        ) { inbound, outbound, _ in
            try await outbound.write(.text(#"{"type":"connection_init"}"#))
            var messages = inbound.messages(maxSize: 1 << 20).makeAsyncIterator()
            _ = try await messages.next()  // connection_ack
            let subscribe =
                #"{"type":"subscribe","id":"bench","channel":"\#(channel)","authorization":\#(authorizer.connectAuthorizationJSON())}"#
            try await outbound.write(.text(subscribe))
            _ = try await messages.next()  // subscribe_success
            let start = ContinuousClock.now
            async let publishing: Void = publish(count, to: channel, server: server, event: event)
            var received = 0
            while received < count, let message = try await messages.next() {
                if case .text(let text) = message, text.hasPrefix(#"{"type":"data""#) { received += 1 }
            }
            await publishing
            let duration = ContinuousClock.now - start
            elapsed.withLock { $0 = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18 }
            try await outbound.close(.normalClosure, reason: nil)
        }
        return elapsed.withLock { $0 }
    }
}
