import SubscriberCore

/// The server-to-client messages of the AppSync Events WebSocket protocol, as compact JSON text (events and strings
/// escaped with ``JSONString``, so `<`, `>` and `/` pass unchanged).
enum AppSyncServerMessage {
    static let keepAlive = #"{"type":"ka"}"#

    /// `connection_ack` with `connectionTimeoutMs` at the top level, as the service sends it.
    static func connectionAck(timeoutMs: Int) -> String {
        JSONString.object([(key: "type", json: #""connection_ack""#), (key: "connectionTimeoutMs", json: String(timeoutMs))])
    }

    static func connectionError(_ errors: [AppSyncErrorEntry]) -> String {
        JSONString.object([(key: "type", json: #""connection_error""#), (key: "errors", json: AppSyncErrorEntry.array(errors))])
    }

    static func subscribeSuccess(id: String) -> String { withID("subscribe_success", id) }

    static func subscribeError(id: String, _ error: AppSyncErrorEntry) -> String { withErrors("subscribe_error", id, [error]) }

    static func unsubscribeSuccess(id: String) -> String { withID("unsubscribe_success", id) }

    static func unsubscribeError(id: String, _ error: AppSyncErrorEntry) -> String { withErrors("unsubscribe_error", id, [error]) }

    static func publishError(id: String?, _ error: AppSyncErrorEntry) -> String { withErrors("publish_error", id, [error]) }

    static func error(id: String?, _ error: AppSyncErrorEntry) -> String { withErrors("error", id, [error]) }

    /// `publish_success` with the per-event outcome.
    static func publishSuccess(id: String, _ result: PublishResult) -> String {
        JSONString.object([
            (key: "type", json: #""publish_success""#),
            (key: "id", json: JSONString.quoted(id)),
            (key: "successful", json: successfulJSON(result.successful)),
            (key: "failed", json: failedJSON(result.failed)),
        ])
    }

    /// One `data` message: `event` is a string holding one JSON-encoded event.
    static func data(id: String, event: String) -> String {
        JSONString.object([
            (key: "type", json: #""data""#),
            (key: "id", json: JSONString.quoted(id)),
            (key: "event", json: JSONString.quoted(event)),
        ])
    }

    /// The HTTP publish response body `{"successful":[…],"failed":[…]}`.
    static func httpPublishResponse(_ result: PublishResult) -> String {
        JSONString.object([(key: "successful", json: successfulJSON(result.successful)), (key: "failed", json: failedJSON(result.failed))])
    }

    private static func successfulJSON(_ events: [PublishedEvent]) -> String {
        JSONString.array(
            events.map {
                JSONString.object([(key: "identifier", json: JSONString.quoted($0.identifier)), (key: "index", json: String($0.index))])
            })
    }

    private static func failedJSON(_ events: [FailedEvent]) -> String {
        JSONString.array(
            events.map { event in
                var members = [(key: "identifier", json: JSONString.quoted(event.identifier)), (key: "index", json: String(event.index))]
                if let code = event.code { members.append((key: "code", json: String(code))) }
                if let message = event.message { members.append((key: "message", json: JSONString.quoted(message))) }
                return JSONString.object(members)
            })
    }

    private static func withID(_ type: String, _ id: String) -> String {
        JSONString.object([(key: "type", json: JSONString.quoted(type)), (key: "id", json: JSONString.quoted(id))])
    }

    private static func withErrors(_ type: String, _ id: String?, _ errors: [AppSyncErrorEntry]) -> String {
        var members = [(key: "type", json: JSONString.quoted(type))]
        if let id { members.append((key: "id", json: JSONString.quoted(id))) }
        members.append((key: "errors", json: AppSyncErrorEntry.array(errors)))
        return JSONString.object(members)
    }
}
