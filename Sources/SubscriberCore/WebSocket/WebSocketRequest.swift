import Foundation

/// What a transport asks the WebSocket seam to open: the URL, the subprotocols to offer, the one the server must
/// select, and extra upgrade-request headers.
public struct WebSocketRequest: Sendable, Equatable {
    /// The `ws://` or `wss://` URL to connect to.
    public var url: URL
    /// Subprotocols offered in `Sec-WebSocket-Protocol`, in order of preference.
    public var subprotocols: [String]
    /// The subprotocol the server must select for the transport to speak to it (`aws-appsync-event-ws`,
    /// `graphql-transport-ws`); `nil` accepts any choice, none included. Connectors fail a connection whose server
    /// selected another with ``WebSocketSeamError/subprotocolNotSelected(required:selected:)`` before it is used.
    public var requiredSubprotocol: String?
    /// Additional HTTP headers sent with the upgrade request, in order.
    public var headers: [HTTPHeaderField]

    /// Creates a request.
    ///
    /// - Parameters:
    ///   - url: The `ws://` or `wss://` URL.
    ///   - subprotocols: The subprotocols offered, in order of preference.
    ///   - requiredSubprotocol: The subprotocol the server must select; `nil` accepts any.
    ///   - headers: Additional upgrade-request headers, in order.
    public init(url: URL, subprotocols: [String] = [], requiredSubprotocol: String? = nil, headers: [HTTPHeaderField] = []) {
        self.url = url
        self.subprotocols = subprotocols
        self.requiredSubprotocol = requiredSubprotocol
        self.headers = headers
    }

    /// Checks the subprotocol the server selected against ``requiredSubprotocol``: every connector calls it once the
    /// upgrade succeeded and fails the connection when it throws.
    ///
    /// - Parameter selected: The subprotocol in the server's upgrade response (`nil` or empty: none).
    /// - Throws: ``WebSocketSeamError/subprotocolNotSelected(required:selected:)`` naming both. What the server selected
    ///   is named only as far as it cannot carry credentials: AppSync offers its authorization as a subprotocol, so a
    ///   server (or proxy) echoing the offer back would otherwise put it in logs and errors. A subprotocol of more than
    ///   64 characters is named by its position among those offered, if it was, and its length.
    public func checkSelectedSubprotocol(_ selected: String?) throws(WebSocketSeamError) {
        guard let requiredSubprotocol else { return }
        let selected = selected.flatMap { $0.isEmpty ? nil : $0 }
        guard selected != requiredSubprotocol else { return }
        throw .subprotocolNotSelected(required: requiredSubprotocol, selected: selected.map(redacted))
    }

    /// `selected` with every comma-separated token long enough to carry a credential replaced by a description of it.
    private func redacted(_ selected: String) -> String {
        selected.split(separator: ",", omittingEmptySubsequences: false).map { part in
            let token = part.trimmingCharacters(in: .whitespaces)
            guard token.count > 64 else { return token }
            let offered = subprotocols.firstIndex(of: token).map { "offered subprotocol \($0 + 1), " } ?? ""
            return "<\(offered)\(token.count) characters, not shown>"
        }.joined(separator: ", ")
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
