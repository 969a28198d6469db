import AppSyncEventsTransport
import GraphQLTransport
import Logging
import SubscriberCore
import WebSocketNIO

/// Builds either transport the way an app would, except for the buffer limits: burst runs raise them above the
/// burst so the numbers measure speed, not drops (`--default-buffers` keeps the library's defaults).
enum TransportMaker {
    static func make(_ wire: WireProtocol, options: RealtimeBench) throws -> any RealtimeTransport {
        let bufferLimit = options.defaultBuffers ? nil : options.count + 16
        switch wire {
        case .appsync:
            var configuration = AppSyncEventsConfiguration(endpoint: try AppSyncEndpoint(options.endpoint))
            if let bufferLimit { configuration.link.subscriptionBufferLimit = bufferLimit }
            return AppSyncEventsTransport(
                configuration: configuration, auth: StaticAuthSession(.apiKey(options.apiKey)), connector: NIOWebSocketConnector(),
                logger: Logger(label: "bench.appsync"))
        case .graphql:
            var configuration = try GraphQLTransportConfiguration(options.endpoint)
            if let bufferLimit { configuration.link.subscriptionBufferLimit = bufferLimit }
            return GraphQLTransport(
                configuration: configuration, auth: StaticAuthSession(.bearerToken(options.token)), connector: NIOWebSocketConnector(),
                logger: Logger(label: "bench.graphql"))
        }
    }
}
