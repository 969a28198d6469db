import SubscriberCore

/// The client-to-server messages of the AppSync Events WebSocket protocol, as canonical JSON text.
enum AppSyncOutboundMessage {
    static let connectionInit = #"{"type":"connection_init"}"#

    /// The body IAM signs for a subscribe: `{"channel":"<channel>"}`.
    static func subscribeSigningBody(channel: String) -> String {
        JSONString.object([(key: "channel", json: JSONString.quoted(channel))])
    }

    /// The body IAM signs for a publish, which is also the HTTP publish body.
    static func publishBody(channel: String, events: [String]) -> String {
        JSONString.object([
            (key: "channel", json: JSONString.quoted(channel)),
            (key: "events", json: JSONString.array(events.map(JSONString.quoted))),
        ])
    }

    static func subscribe(id: String, channel: String, authorization: [String: String]) -> String {
        JSONString.object([
            (key: "type", json: #""subscribe""#),
            (key: "id", json: JSONString.quoted(id)),
            (key: "channel", json: JSONString.quoted(channel)),
            (key: "authorization", json: JSONString.sortedStringObject(authorization)),
        ])
    }

    static func unsubscribe(id: String) -> String {
        JSONString.object([(key: "type", json: #""unsubscribe""#), (key: "id", json: JSONString.quoted(id))])
    }

    static func publish(id: String, channel: String, events: [String], authorization: [String: String]) -> String {
        JSONString.object([
            (key: "type", json: #""publish""#),
            (key: "id", json: JSONString.quoted(id)),
            (key: "channel", json: JSONString.quoted(channel)),
            (key: "events", json: JSONString.array(events.map(JSONString.quoted))),
            (key: "authorization", json: JSONString.sortedStringObject(authorization)),
        ])
    }
}
