/// Why a user's tokens were revoked (`reason` on `user/tokenRevoked`).
///
/// The documents list one value, `PASSWORD_CHANGED`. Tolerant: any other value decodes as ``unknown(_:)``
/// instead of failing the event, and encodes back to the string it came from.
public enum TokenRevokeReason: TolerantStringEnum {
    /// `PASSWORD_CHANGED`: the user changed their password.
    case passwordChanged
    /// A value the documents do not list, kept verbatim.
    case unknown(String)

    /// The documented values.
    public static let knownCases: [TokenRevokeReason] = [.passwordChanged]

    /// The reason named `rawValue`; ``unknown(_:)`` for any value not documented (matching is case-sensitive).
    public init(rawValue: String) {
        self = Self.knownCases.first { $0.rawValue == rawValue } ?? .unknown(rawValue)
    }

    /// The wire value, such as `PASSWORD_CHANGED`.
    public var rawValue: String {
        switch self {
        case .passwordChanged: "PASSWORD_CHANGED"
        case .unknown(let value): value
        }
    }
}
