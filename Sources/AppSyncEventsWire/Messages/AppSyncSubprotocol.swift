/// The `Sec-WebSocket-Protocol` values of an AppSync Events connection: the protocol's name, and the auth object of
/// the connection carried as `header-<base64url JSON>` (see ``Base64URL``).
package enum AppSyncSubprotocol {
    /// The protocol's name, which a client offers and a server selects.
    package static let name = "aws-appsync-event-ws"
    /// The prefix of the subprotocol carrying the connect auth object.
    package static let headerPrefix = "header-"
}
