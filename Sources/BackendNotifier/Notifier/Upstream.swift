import Foundation
import SubscriberCore

/// One upstream subscription of the notifier. Five of them carry the nine event kinds on either transport:
///
/// | upstream | AppSync Events channel | GraphQL subscription (default document) | feeds |
/// |---|---|---|---|
/// | device | `vortex-app/user/{userId}/device/*` | `subscribeDeviceState` | presence, recording, firmware; `deviceValues()` |
/// | organization | `vortex-app/user/{userId}/organization/*` | `subscribeOrganizationState` | licence, plan, AI settings; `organizationValues()` |
/// | archive | `vortex-app/user/{userId}/archive/stateChanged` | `subscribeArchiveState` | `archiveValues()` |
/// | role | `vortex-app/user/{userId}/roleChanged` | `subscribeRoleChange` | `roleValues()` |
/// | revoke | `vortex-app/user/{userId}/tokenRevoked` | `subscribeUserTokenRevoke` | `revokeValues()` |
public enum NotifierUpstream: String, CaseIterable, Sendable, Codable {
    /// Device presence, recording and firmware.
    case device
    /// Licence phase, plan and AI settings.
    case organization
    /// Archive state.
    case archive
    /// Role changes of the signed-in user.
    case role
    /// Token revocations of the signed-in user.
    case revoke

    /// The subscription the notifier makes for this upstream on a transport of `dialect` for the signed-in identity
    /// (an AppSync channel, or the GraphQL operation — `operations[self]` or the default document — with the identity
    /// variables it declares); `nil` when signed out.
    public func request(
        dialect: TransportDialect, userId: String?, organizationId: String?, namespace: String,
        operations: [NotifierUpstream: GraphQLOperation] = [:]
    ) -> SubscriptionRequest? {
        guard let userId else { return nil }
        switch dialect {
        case .appSyncChannels:
            let base = "\(namespace)/user/\(userId)/"
            switch self {
            case .device: return .channel(base + "device/*")
            case .organization: return .channel(base + "organization/*")
            case .archive: return .channel(base + "archive/stateChanged")
            case .role: return .channel(base + "roleChanged")
            case .revoke: return .channel(base + "tokenRevoked")
            }
        case .graphQL:
            let operation = operations[self] ?? LegacyGraphQLDocuments.operation(for: self)
            return .graphQL(operation.withIdentity(userId: userId, organizationId: organizationId))
        }
    }
}

typealias Upstream = NotifierUpstream

extension GraphQLOperation {
    /// The operation with the identity variables it declares (`$userId`, `$orgId`, `$organizationId`) added to its
    /// variables; an operation that declares none is unchanged.
    public func withIdentity(userId: String?, organizationId: String?) -> GraphQLOperation {
        var identity: [String: String] = [:]
        if let userId, query.contains("$userId") { identity["userId"] = userId }
        if let organizationId, query.contains("$orgId") { identity["orgId"] = organizationId }
        if let organizationId, query.contains("$organizationId") { identity["organizationId"] = organizationId }
        guard !identity.isEmpty else { return self }
        var variables = variablesJSON.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] } ?? [:]
        for (key, value) in identity { variables[key] = value }
        var copy = self
        if let data = try? JSONSerialization.data(withJSONObject: variables, options: [.sortedKeys]) {
            copy.variablesJSON = String(decoding: data, as: UTF8.self)
        }
        return copy
    }
}
