import Foundation
import GraphQL
import SubscriberCore

/// The server-to-client messages of graphql-transport-ws (protocols.md §2), as JSON text.
enum GraphQLServerMessage {
    /// `connection_ack` (no payload).
    static let connectionAck = #"{"type":"connection_ack"}"#

    /// `pong`, echoing the `ping`'s payload (a JSON text) when it had one.
    static func pong(payload: String?) -> String {
        var members: [(key: String, json: String)] = [(key: "type", json: #""pong""#)]
        if let payload { members.append((key: "payload", json: payload)) }
        return JSONString.object(members)
    }

    /// `next` with one execution result: `{"data":…}` plus `errors` when there are any.
    static func next(id: String, _ result: GraphQLResult) -> String {
        var payload: [(key: String, json: String)] = []
        if let data = result.data { payload.append((key: "data", json: GraphQLJSON.text(data))) }
        if !result.errors.isEmpty { payload.append((key: "errors", json: GraphQLJSON.text(result.errors))) }
        return message(id: id, type: "next", payload: JSONString.object(payload))
    }

    /// `next` with a result that has `data` (given as JSON text) and no errors.
    static func next(id: String, data: String) -> String {
        message(id: id, type: "next", payload: "{\"data\":" + data + "}")
    }

    /// `error`: the operation failed before it produced results (syntax, validation, argument or permission
    /// errors); `payload` is the list of GraphQL errors. No `complete` follows.
    static func error(id: String, _ errors: [GraphQLError]) -> String {
        message(id: id, type: "error", payload: GraphQLJSON.text(errors))
    }

    /// `complete`: the server ended the operation.
    static func complete(id: String) -> String {
        JSONString.object([(key: "id", json: JSONString.quoted(id)), (key: "type", json: #""complete""#)])
    }

    private static func message(id: String, type: String, payload: String) -> String {
        JSONString.object([
            (key: "id", json: JSONString.quoted(id)), (key: "type", json: JSONString.quoted(type)), (key: "payload", json: payload),
        ])
    }
}

/// JSON text for GraphQLSwift values, in field order, with strings escaped like every other message of the server
/// (``JSONString``).
enum GraphQLJSON {
    /// A `Map` as JSON. Whole-number doubles print without a fraction (`12`, as JavaScript servers print them);
    /// `undefined` members are left out.
    static func text(_ map: Map) -> String {
        switch map {
        case .undefined, .null: return "null"
        case .bool(let value): return value ? "true" : "false"
        case .number(let number): return text(number)
        case .string(let value): return JSONString.quoted(value)
        case .array(let values): return JSONString.array(values.map(text))
        case .dictionary(let members):
            return JSONString.object(members.filter { !$0.value.isUndefined }.map { (key: $0.key, json: text($0.value)) })
        }
    }

    private static func text(_ number: Number) -> String {
        switch number.storageType {
        case .bool: return number.boolValue ? "true" : "false"
        case .int: return String(number.int64Value)
        case .double, .unknown:
            let value = number.doubleValue
            guard value.isFinite else { return "null" }
            if value == value.rounded(), abs(value) < 9_007_199_254_740_992 { return String(Int64(value)) }
            return JSONValue.number(value).jsonText
        }
    }

    /// GraphQL errors as the spec's JSON: `message`, then `locations` and `path` when known, then `extensions`.
    static func text(_ errors: [GraphQLError]) -> String {
        JSONString.array(errors.map(text))
    }

    /// One GraphQL error as JSON.
    static func text(_ error: GraphQLError) -> String {
        var members: [(key: String, json: String)] = [(key: "message", json: JSONString.quoted(error.message))]
        if !error.locations.isEmpty {
            let locations = error.locations.map { location in
                JSONString.object([(key: "line", json: String(location.line)), (key: "column", json: String(location.column))])
            }
            members.append((key: "locations", json: JSONString.array(locations)))
        }
        if !error.path.elements.isEmpty {
            let path = error.path.elements.map { element -> String in
                switch element {
                case .index(let index): String(index)
                case .key(let key): JSONString.quoted(key)
                }
            }
            members.append((key: "path", json: JSONString.array(path)))
        }
        if !error.extensions.isEmpty {
            let extensions = error.extensions.sorted { $0.key < $1.key }.map { (key: $0.key, json: text($0.value)) }
            members.append((key: "extensions", json: JSONString.object(extensions)))
        }
        return JSONString.object(members)
    }
}
