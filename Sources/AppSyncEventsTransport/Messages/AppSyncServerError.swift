import AppSyncEventsWire
import Foundation
import SubscriberCore

/// One entry of an AppSync Events `errors` array.
package struct AppSyncServerError: Sendable, Equatable {
    /// For example `UnauthorizedException` or `BadRequestException`.
    package var errorType: String
    /// The service's message, when given.
    package var message: String?

    /// The error types that mean the credentials were refused (never worth retrying with the same credentials).
    static let authErrorTypes: Set<String> = [
        "UnauthorizedException", "Unauthorized", "NotAuthorizedException", "AuthorizationError", "ForbiddenException",
    ]

    /// Whether this error means the credentials were refused.
    package var isAuthFailure: Bool {
        Self.authErrorTypes.contains(errorType) || (message?.localizedCaseInsensitiveContains("token expired") ?? false)
    }

    /// Decodes the `errors` array of a frame; an empty array when there is none or it is malformed.
    static func decodeErrors(from frame: Data) -> [AppSyncServerError] {
        struct Envelope: Decodable { var errors: [AppSyncServerError]? }
        return (try? JSONDecoder().decode(Envelope.self, from: frame))?.errors ?? []
    }

    /// The first error, or a placeholder naming the message type when the server sent none.
    static func first(of errors: [AppSyncServerError], type: String) -> AppSyncServerError {
        errors.first ?? AppSyncServerError(errorType: "UnknownError", message: "\(type) without errors")
    }

    /// The error of a subscribe or publish to `channel` that the server refused as unauthorized again after the
    /// credentials were refreshed: `subscriptionRejected` or `publishRejected` with this error type, and a message
    /// naming the channel and the server's reason, for example
    /// `channel vortex-app/user/u-1/roleChanged refused after refreshing credentials: Token expired`.
    func refusedAfterRefresh(_ use: ChannelName.Use, channel: String) -> RealtimeError {
        let reason = message.flatMap { $0.isEmpty ? nil : $0 } ?? errorType
        let detail = "channel \(channel) refused after refreshing credentials: \(reason)"
        switch use {
        case .subscribe: return .subscriptionRejected(errorType: errorType, message: detail)
        case .publish: return .publishRejected(errorType: errorType, message: detail)
        }
    }

    /// The subscription error for this entry.
    var subscriptionError: RealtimeError {
        if errorType == "MaxSubscriptionsReachedError" {
            return .subscriptionLimitReached(AppSyncEventsConfiguration.serviceSubscriptionLimit)
        }
        return .subscriptionRejected(errorType: errorType, message: message)
    }
}

// Decoding in an extension keeps the synthesized memberwise initializer.
extension AppSyncServerError: Decodable {
    private enum CodingKeys: String, CodingKey { case errorType, message }

    /// Decodes an entry; one without `errorType` reads as `UnknownError`.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        errorType = try container.decodeIfPresent(String.self, forKey: .errorType) ?? "UnknownError"
        message = try container.decodeIfPresent(String.self, forKey: .message)
    }
}
