import Foundation

/// The user's tokens were revoked (`user/tokenRevoked`): the app should sign the user out.
///
/// Published on `vortex-app/user/{userId}/tokenRevoked`; also the payload of the legacy GraphQL subscription
/// `subscribeUserTokenRevoke`, so both APIs use this type. `userId` and `revokedAt` are required: a payload
/// without either fails to decode.
public struct UserTokenRevokeOutput: VortexEventPayload {
    /// The event type, `user/tokenRevoked`; `nil` on legacy GraphQL payloads.
    public var eventType: String?
    /// When the event occurred (ISO 8601).
    public var timestamp: String?
    /// The user whose tokens were revoked (required).
    public var userId: String
    /// When the tokens were revoked, as sent (required; ISO 8601 expected, see ``revokedDate``).
    public var revokedAt: String
    /// Why; unknown values decode as ``TokenRevokeReason/unknown(_:)``.
    public var reason: TokenRevokeReason?
    /// The identifier of the request that revoked the tokens.
    public var requestId: String?

    /// Creates a payload.
    public init(
        eventType: String? = nil,
        timestamp: String? = nil,
        userId: String,
        revokedAt: String,
        reason: TokenRevokeReason? = nil,
        requestId: String? = nil
    ) {
        self.eventType = eventType
        self.timestamp = timestamp
        self.userId = userId
        self.revokedAt = revokedAt
        self.reason = reason
        self.requestId = requestId
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case eventType, timestamp, userId, revokedAt, reason, requestId
    }

    /// Every JSON key this model decodes.
    public static let knownFields: Set<String> = Set(CodingKeys.allCases.map(\.rawValue))

    /// ``revokedAt`` parsed as ISO 8601; `nil` when in another format.
    public var revokedDate: Date? { ISO8601Timestamp.date(from: revokedAt) }
}
