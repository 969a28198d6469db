import Foundation
import SubscriberCore
import Testing

@Suite("WebSocketRequest")
struct WebSocketRequestTests {
    /// AppSync's offer: the protocol and the authorization as `header-<base64url JSON>` (here with an API key in it).
    static let authorization = "header-" + Data(Self.authorizationJSON.utf8).base64EncodedString()
    static let authorizationJSON = #"{"host":"example.appsync-api.eu-west-1.amazonaws.com","x-api-key":"da2-secretsecretsecret"}"#
    static let request = WebSocketRequest(
        url: URL(string: "wss://example.appsync-realtime-api.eu-west-1.amazonaws.com/event/realtime")!,
        subprotocols: ["aws-appsync-event-ws", authorization], requiredSubprotocol: "aws-appsync-event-ws")

    @Test("the required subprotocol passes; another, or none, fails naming what was selected")
    func selection() throws {
        try Self.request.checkSelectedSubprotocol("aws-appsync-event-ws")
        #expect(throws: WebSocketSeamError.subprotocolNotSelected(required: "aws-appsync-event-ws", selected: "graphql-ws")) {
            try Self.request.checkSelectedSubprotocol("graphql-ws")
        }
        #expect(throws: WebSocketSeamError.subprotocolNotSelected(required: "aws-appsync-event-ws", selected: nil)) {
            try Self.request.checkSelectedSubprotocol("")
        }
    }

    @Test(
        "a server echoing the offered authorization back never gets it into the error",
        arguments: [authorization, "aws-appsync-event-ws, \(authorization)", "aws-appsync-event-ws,\(authorization)"])
    func echoedAuthorizationIsNotShown(selected: String) {
        let error = #expect(throws: WebSocketSeamError.self) { try Self.request.checkSelectedSubprotocol(selected) }
        let description = error.map { "\($0)" } ?? ""
        #expect(!description.contains("header-"))
        #expect(!description.contains(String(Self.authorization.dropFirst(7).prefix(12))))
        #expect(description.contains("<offered subprotocol 2, \(Self.authorization.count) characters, not shown>"))
    }

    @Test("a long subprotocol that was not offered is named by its length only")
    func longUnknownSubprotocol() {
        let selected = String(repeating: "x", count: 65)
        let error = #expect(throws: WebSocketSeamError.self) { try Self.request.checkSelectedSubprotocol(selected) }
        #expect(error == .subprotocolNotSelected(required: "aws-appsync-event-ws", selected: "<65 characters, not shown>"))
    }
}
