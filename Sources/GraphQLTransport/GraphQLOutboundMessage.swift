import SubscriberCore

/// The client-to-server messages of graphql-transport-ws, as JSON text.
enum GraphQLOutboundMessage {
    static func connectionInit(payload: String) -> String {
        JSONString.object([(key: "type", json: #""connection_init""#), (key: "payload", json: payload)])
    }

    static let ping = #"{"type":"ping"}"#
    static let pong = #"{"type":"pong"}"#

    static func subscribe(id: String, operation: GraphQLOperation) -> String {
        var payload: [(key: String, json: String)] = [(key: "query", json: JSONString.quoted(operation.query))]
        if let name = operation.operationName { payload.append((key: "operationName", json: JSONString.quoted(name))) }
        if let variables = operation.variablesJSON { payload.append((key: "variables", json: variables)) }
        if let extensions = operation.extensionsJSON { payload.append((key: "extensions", json: extensions)) }
        return JSONString.object([
            (key: "id", json: JSONString.quoted(id)),
            (key: "type", json: #""subscribe""#),
            (key: "payload", json: JSONString.object(payload)),
        ])
    }

    static func complete(id: String) -> String {
        JSONString.object([(key: "id", json: JSONString.quoted(id)), (key: "type", json: #""complete""#)])
    }
}
