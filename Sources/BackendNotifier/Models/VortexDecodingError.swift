/// Why an event payload could not be decoded. The notifier drops, logs and counts such an event and goes on.
///
/// ``description`` is one readable line naming the model and, where there is one, the field (a dotted path for
/// nested fields, such as `aiControlSetting.termsAgreement`).
public enum VortexDecodingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The bytes are not JSON, or not a JSON object.
    case malformedJSON(model: String, detail: String)
    /// A required field is absent or `null`: `userId` and `revokedAt` on a token revocation, and `eventType` and
    /// `timestamp` on every payload of AppSync Events (``VortexEventDecoder``).
    case missingField(model: String, field: String)
    /// A field holds a value of the wrong JSON type, such as a string where a Boolean belongs.
    case typeMismatch(model: String, field: String, expected: String)
    /// A field's value has the right JSON type but cannot be represented, such as `1.5` for an integer.
    case invalidValue(model: String, field: String, detail: String)
    /// The payload's `eventType` names none of the nine kinds (or is absent), so it cannot be routed.
    case unknownEventType(String?)

    /// The field at fault, as a dotted path (`eventType` for an unknown or absent event type); `nil` when the error is
    /// not about one field.
    public var field: String? {
        switch self {
        case .missingField(_, let field), .typeMismatch(_, let field, _), .invalidValue(_, let field, _): field
        case .unknownEventType: "eventType"
        case .malformedJSON: nil
        }
    }

    /// One readable line.
    public var description: String {
        switch self {
        case .malformedJSON(let model, let detail):
            "\(model): the payload is not a JSON object (\(detail))"
        case .missingField(let model, let field):
            "\(model): required field '\(field)' is missing or null"
        case .typeMismatch(let model, let field, let expected):
            "\(model): field '\(field)' has the wrong type (expected \(expected))"
        case .invalidValue(let model, let field, let detail):
            "\(model): field '\(field)' has an invalid value (\(detail))"
        case .unknownEventType(let eventType?):
            "unknown eventType '\(eventType)'"
        case .unknownEventType(nil):
            "the payload has no eventType to route by"
        }
    }

    /// Translates a `DecodingError` thrown while decoding `model` into a readable error naming the field.
    init(_ error: DecodingError, model: String) {
        switch error {
        case .keyNotFound(let key, let context):
            self = .missingField(model: model, field: Self.path(context.codingPath + [key]))
        case .valueNotFound(_, let context):
            if context.codingPath.isEmpty {
                self = .malformedJSON(model: model, detail: "null")
            } else {
                self = .missingField(model: model, field: Self.path(context.codingPath))
            }
        case .typeMismatch(let type, let context):
            if context.codingPath.isEmpty {
                self = .malformedJSON(model: model, detail: "expected a JSON object")
            } else {
                self = .typeMismatch(model: model, field: Self.path(context.codingPath), expected: Self.name(of: type))
            }
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty {
                self = .malformedJSON(model: model, detail: context.debugDescription)
            } else {
                self = .invalidValue(
                    model: model, field: Self.path(context.codingPath), detail: context.debugDescription)
            }
        @unknown default:
            self = .malformedJSON(model: model, detail: String(describing: error))
        }
    }

    /// `a.b[2].c` for a coding path.
    private static func path(_ codingPath: [any CodingKey]) -> String {
        var text = ""
        for key in codingPath {
            if let index = key.intValue, key.stringValue.hasPrefix("Index ") {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return text
    }

    /// A plain name for the type a decoder expected.
    private static func name(of type: Any.Type) -> String {
        switch type {
        case is String.Type: "string"
        case is Bool.Type: "boolean"
        case is Int.Type, is Int64.Type, is Int32.Type: "integer"
        case is Double.Type, is Float.Type: "number"
        case is [Any].Type: "array"
        case is [String: Any].Type: "object"
        default: String(describing: type)
        }
    }
}
