import SubscriberCore

#if os(Linux) || os(Android) || os(Windows) || os(OpenBSD)
import WebSocketNIO
#else
import WebSocketURLSession
#endif

extension TransportFactory {
    /// The WebSocket implementation the composition root uses unless told otherwise: `URLSessionWebSocketConnector`
    /// (module `WebSocketURLSession`) on Apple platforms (no third-party networking in the app),
    /// `NIOWebSocketConnector` (module `WebSocketNIO`, SwiftNIO) elsewhere (FoundationNetworking has no WebSocket
    /// client). Composition links only the platform's connector module. On Apple platforms NIO stays selectable:
    /// depend on the `WebSocketNIO` product and pass `NIOWebSocketConnector()` to ``RealtimeStack`` or
    /// ``TransportFactory``.
    public static var platformConnector: any WebSocketConnector {
        #if os(Linux) || os(Android) || os(Windows) || os(OpenBSD)
        NIOWebSocketConnector()
        #else
        URLSessionWebSocketConnector()
        #endif
    }
}
