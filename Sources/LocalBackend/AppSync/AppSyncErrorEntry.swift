import AppSyncEventsWire
import SubscriberCore

/// One entry of an AppSync `errors` array: `{"errorType":…,"message":…}`.
struct AppSyncErrorEntry: Sendable, Equatable, Error {
    var errorType: String
    var message: String?

    static func unauthorized(_ message: String = "You are not authorized to make this call.") -> AppSyncErrorEntry {
        AppSyncErrorEntry(errorType: "UnauthorizedException", message: message)
    }

    static func badRequest(_ message: String) -> AppSyncErrorEntry {
        AppSyncErrorEntry(errorType: "BadRequestException", message: message)
    }

    /// The service's answer to a channel that breaks the naming rules (a wildcard publish included).
    static let invalidChannel = AppSyncErrorEntry.badRequest("Invalid Channel Format")

    /// The answer to an operation id that breaks ``AppSyncMessageID/pattern``.
    static let invalidID = AppSyncErrorEntry.badRequest("Invalid id: it must match \(AppSyncMessageID.pattern)")

    /// The answer to `unsubscribe` for an id with no subscription (protocols.md: `UnknownOperationError`).
    static func unknownOperation(_ id: String) -> AppSyncErrorEntry {
        AppSyncErrorEntry(errorType: "UnknownOperationError", message: "Unknown operation id \(id)")
    }

    static let maxSubscriptions = AppSyncErrorEntry(
        errorType: "MaxSubscriptionsReachedError", message: "Max number of subscriptions reached")

    static func unsupported(_ type: String) -> AppSyncErrorEntry {
        AppSyncErrorEntry(errorType: "UnsupportedOperation", message: "Operation not supported through the realtime channel: \(type)")
    }

    /// The JSON object.
    var json: String {
        var members = [(key: "errorType", json: JSONString.quoted(errorType))]
        if let message { members.append((key: "message", json: JSONString.quoted(message))) }
        return JSONString.object(members)
    }

    /// `[entries…]` as a JSON array.
    static func array(_ entries: [AppSyncErrorEntry]) -> String { JSONString.array(entries.map(\.json)) }

    /// The HTTP error body `{"errors":[…]}`.
    var httpBody: String { JSONString.object([(key: "errors", json: Self.array([self]))]) }
}
