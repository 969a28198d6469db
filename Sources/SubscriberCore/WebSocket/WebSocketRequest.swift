import Foundation

/// What a transport asks the WebSocket seam to open: the URL, the subprotocols to offer and extra
/// upgrade-request headers.
public struct WebSocketRequest: Sendable, Equatable {
    /// The `ws://` or `wss://` URL to connect to.
    public var url: URL
    /// Subprotocols offered in `Sec-WebSocket-Protocol`, in order of preference.
    public var subprotocols: [String]
    /// Additional HTTP headers sent with the upgrade request, in order.
    public var headers: [HTTPHeaderField]

    /// Creates a request.
    public init(url: URL, subprotocols: [String] = [], headers: [HTTPHeaderField] = []) {
        self.url = url
        self.subprotocols = subprotocols
        self.headers = headers
    }
}

/// One HTTP header field: a name and a value. Order is preserved where it is used.
public struct HTTPHeaderField: Sendable, Equatable, Hashable {
    /// The field name, as it is sent.
    public var name: String
    /// The field value.
    public var value: String

    /// Creates a header field.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}
