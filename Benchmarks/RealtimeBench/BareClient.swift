import AppSyncEventsTransport
import Foundation
import HTTPTypes
import Logging
import NIOWebSocket
import SubscriberCore
import WSClient

/// The floor: swift-websocket's `WSClient` receiving the same frames, doing the handshake by hand and counting text
/// frames, with no JSON work at all.
struct BareClient {
    let options: RealtimeBench

    func run(window: MeasurementWindow, progress: Progress) async throws -> BenchResult {
        let count = options.count
        var configuration = WebSocketClientConfiguration(maxFrameSize: 1 << 20)
        let url: String
        let handshake: [String]
        let awaitsSubscribeReply: Bool
        switch options.wire {
        case .appsync:
            let endpoint = try AppSyncEndpoint(options.endpoint)
            let authorizer = AppSyncAuthorizer(endpoint: endpoint, credentials: .apiKey(options.apiKey))
            url = endpoint.realtimeURL.absoluteString
            configuration.additionalHeaders[.secWebSocketProtocol] = authorizer.subprotocols().joined(separator: ", ")
            handshake = [
                #"{"type":"connection_init"}"#,
                #"{"type":"subscribe","id":"bench","channel":"\#(options.channel)","authorization":\#(authorizer.connectAuthorizationJSON())}"#,
            ]
            awaitsSubscribeReply = true  // subscribe_success
        case .graphql:
            url = options.endpoint
            configuration.additionalHeaders[.secWebSocketProtocol] = "graphql-transport-ws"
            let subscribe =
                #"{"id":"bench","type":"subscribe","payload":{"operationName":"DeviceState","query":"\#(DeviceStateOperation.query)","variables":{"orgId":"\#(options.org)"}}}"#
            handshake = [#"{"type":"connection_init","payload":{"Authorization":"\#(options.token)"}}"#, subscribe]
            awaitsSubscribeReply = false  // graphql-transport-ws has no subscribe acknowledgement
        }
        let logger = Logger(label: "bench.bare") { _ in SwiftLogNoOpLogHandler() }
        try await WebSocketClient.connect(url: url, configuration: configuration, logger: logger) { inbound, outbound, _ in
            var messages = inbound.messages(maxSize: 1 << 20).makeAsyncIterator()
            try await outbound.write(.text(handshake[0]))
            _ = try await messages.next()  // connection_ack
            try await outbound.write(.text(handshake[1]))
            if awaitsSubscribeReply { _ = try await messages.next() }
            var received = 0
            while received < count, let message = try await messages.next() {
                if case .text = message {
                    received += 1
                    progress.publish(received)
                }
            }
            try await outbound.close(.normalClosure, reason: nil)
        }
        return BenchResult(label: "bare-\(options.wire.rawValue)", received: progress.current, window: window)
    }
}
