import AppSyncEventsWire
import Foundation
import HTTPTypes

/// An AppSync authorization object (`host`, `x-api-key`, `Authorization`, `x-amz-date`, …), with names compared
/// case-insensitively. It arrives in the `header-` subprotocol, as plain upgrade or HTTP request headers, or as the
/// `authorization` member of `subscribe` and `publish`.
struct AuthObject: Sendable, Equatable {
    /// The fields, names lowercased.
    private(set) var fields: [String: String]

    init(_ fields: [String: String]) {
        var lowered: [String: String] = [:]
        for (name, value) in fields { lowered[name.lowercased()] = value }
        self.fields = lowered
    }

    /// The value of `name` (any letter case).
    subscript(_ name: String) -> String? { fields[name.lowercased()] }

    /// Whether the object carries any credential at all.
    var hasCredential: Bool { self["x-api-key"] != nil || self["authorization"] != nil }

    /// An object from a decoded JSON object; non-string members are ignored. `nil` when `value` is not an object.
    init?(json value: Any?) {
        guard let object = value as? [String: Any] else { return nil }
        var fields: [String: String] = [:]
        for (name, member) in object {
            if let text = member as? String { fields[name] = text }
        }
        self.init(fields)
    }

    /// The object carried by a `header-<base64url JSON>` subprotocol: `nil` when none is offered, a failure when the
    /// one offered cannot be decoded.
    static func fromSubprotocols(_ subprotocols: [String]) -> Result<AuthObject, AuthFailure>? {
        guard let offered = subprotocols.first(where: { $0.hasPrefix(AppSyncSubprotocol.headerPrefix) }) else { return nil }
        guard let data = Base64URL.decode(String(offered.dropFirst(AppSyncSubprotocol.headerPrefix.count))),
            let object = try? JSONSerialization.jsonObject(with: data), let auth = AuthObject(json: object)
        else {
            return .failure(AuthFailure("The header- subprotocol is not base64url-encoded JSON"))
        }
        return .success(auth)
    }

    /// The subprotocols offered in `Sec-WebSocket-Protocol` (every field, comma-separated, trimmed).
    static func offeredSubprotocols(_ headers: HTTPFields) -> [String] {
        headers[values: .secWebSocketProtocol]
            .flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
    }

    /// An object from plain request headers, as the Swift and Kotlin SDKs send it and as HTTP publish uses it.
    /// `host` comes from the request's authority (HTTP/1 `Host`).
    init(request: HTTPRequest) {
        var fields: [String: String] = [:]
        for field in request.headerFields {
            let name = field.name.canonicalName
            fields[name] = fields[name].map { "\($0),\(field.value)" } ?? field.value
        }
        if let authority = request.authority { fields["host"] = authority }
        self.init(fields)
    }
}
