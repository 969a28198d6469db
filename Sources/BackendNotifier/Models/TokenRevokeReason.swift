/// Why a user's tokens were revoked (`reason` on `user/tokenRevoked`).
///
/// The documents list one value, `PASSWORD_CHANGED`. Tolerant: any other value decodes as ``unknown(_:)``
/// instead of failing the event, and encodes back to the string it came from.
public enum TokenRevokeReason: Sendable, Hashable, RawRepresentable, Codable, CustomStringConvertible {
    /// `PASSWORD_CHANGED`: the user changed their password.
    case passwordChanged
    /// A value the documents do not list, kept verbatim.
    case unknown(String)

    /// The documented values.
    public static let knownCases: [TokenRevokeReason] = [.passwordChanged]

    /// The reason named `rawValue`; ``unknown(_:)`` for any value not documented (matching is case-sensitive).
    public init(rawValue: String) {
        switch rawValue {
        case "PASSWORD_CHANGED": self = .passwordChanged
        default: self = .unknown(rawValue)
        }
    }

    /// The wire value, such as `PASSWORD_CHANGED`.
    public var rawValue: String {
        switch self {
        case .passwordChanged: "PASSWORD_CHANGED"
        case .unknown(let value): value
        }
    }

    /// Whether this is one of the documented values.
    public var isKnown: Bool {
        if case .unknown = self { return false }
        return true
    }

    /// Decodes from a JSON string; a non-string is a type mismatch.
    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(String.self))
    }

    /// Encodes ``rawValue``.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    /// The wire value.
    public var description: String { rawValue }
}
