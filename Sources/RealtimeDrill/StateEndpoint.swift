import BackendNotifier
import Foundation
import RealtimeStore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The local backend's `GET /vortex/state` for one identity: the state a ``RealtimeStore`` must converge to, and a
/// backfill for every kind the store holds. The whole current state answers "what changed since" any instant: the
/// store's merge rules drop what it already holds, so nothing goes backwards and nothing counts twice.
public struct StateEndpoint: Sendable {
    /// The full request URL, with `orgId` and `userId`.
    public let url: URL
    /// The `Authorization` header (that identity's token); `nil` on an `--admin` backend.
    let authorization: String?

    /// The endpoint's path on the backend.
    static let path = "/vortex/state"

    /// - Parameters:
    ///   - base: a URL of the backend: its root (`http://127.0.0.1:4000`), its AppSync URL (`…/event`), or the
    ///     endpoint's own (`…/vortex/state`, kept as it is).
    ///   - organizationId: the identity's organization.
    ///   - userId: the identity's user.
    ///   - authorization: that user's token, sent as `Authorization`; `nil` for an `--admin` backend.
    /// - Throws: ``DrillError/backend(_:)`` when `base` is not an http(s) URL.
    public init(base: String, organizationId: String, userId: String, authorization: String?) throws {
        guard var components = URLComponents(string: base), ["http", "https"].contains(components.scheme ?? ""),
            components.host?.isEmpty == false
        else { throw DrillError.backend("not an http(s) URL: \(base)") }
        if !components.path.hasSuffix(StateEndpoint.path) { components.path = StateEndpoint.path }
        components.queryItems = [URLQueryItem(name: "orgId", value: organizationId), URLQueryItem(name: "userId", value: userId)]
        guard let url = components.url else { throw DrillError.backend("not an http(s) URL: \(base)") }
        self.url = url
        self.authorization = authorization
    }

    /// The body of `GET /vortex/state`.
    /// - Throws: ``DrillError/backend(_:)`` for any status but 200, or what `URLSession` throws.
    public func fetch() async throws -> Data {
        var request = URLRequest(url: url)
        if let authorization { request.setValue(authorization, forHTTPHeaderField: "Authorization") }
        let (body, response) = try await URLSession.shared.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard status == 200 else {
            throw DrillError.backend("GET \(url.path) answered \(status): \(String(decoding: body.prefix(200), as: UTF8.self))")
        }
        return body
    }

    /// The events of `kind` in a state body, read through the payload models.
    public static func events(of kind: VortexEventKind, in body: Data) throws -> [VortexEvent] {
        guard case .object(let root) = try JSONDecoder().decode(JSONValue.self, from: body) else {
            throw DrillError.backend("the state is not a JSON object")
        }
        let holders: [JSONValue]
        switch kind {
        case .devicePresence, .deviceRecording, .deviceFirmware:
            guard case .object(let devices)? = root["devices"] else { return [] }
            holders = Array(devices.values)
        case .licensePhase, .plan, .aiSettings: holders = root["organization"].map { [$0] } ?? []
        case .roleChanged, .tokenRevoked: holders = root["user"].map { [$0] } ?? []
        case .archiveState: return []
        }
        let decoder = VortexEventDecoder()
        return try holders.compactMap { holder in
            guard let event = holder[kind.rawValue] else { return nil }
            return try decoder.decode(kind, from: JSONEncoder().encode(event)).get()
        }
    }

    /// The events of `kind` in the current state (one request).
    public func events(of kind: VortexEventKind) async throws -> [VortexEvent] {
        try Self.events(of: kind, in: try await fetch())
    }

    /// Registers this endpoint as the store's backfill for every kind it holds.
    @MainActor
    public func register(on store: RealtimeStore) {
        store.backfill(.devicePresence) { _ in try await events(of: .devicePresence).compactMap(\.devicePresence) }
        store.backfill(.deviceRecording) { _ in try await events(of: .deviceRecording).compactMap(\.deviceRecording) }
        store.backfill(.deviceFirmware) { _ in try await events(of: .deviceFirmware).compactMap(\.deviceFirmware) }
        store.backfill(.licensePhase) { _ in try await events(of: .licensePhase).compactMap(\.licensePhase) }
        store.backfill(.plan) { _ in try await events(of: .plan).compactMap(\.plan) }
        store.backfill(.aiSettings) { _ in try await events(of: .aiSettings).compactMap(\.aiSettings) }
        store.backfill(.roleChanged) { _ in try await events(of: .roleChanged).compactMap(\.roleChanged) }
        store.backfill(.tokenRevoked) { _ in try await events(of: .tokenRevoked).compactMap(\.tokenRevoked) }
    }
}

extension VortexEvent {
    fileprivate var devicePresence: DevicePresenceOutput? { if case .devicePresence(let value) = self { value } else { nil } }
    fileprivate var deviceRecording: DeviceRecordingOutput? { if case .deviceRecording(let value) = self { value } else { nil } }
    fileprivate var deviceFirmware: DeviceFirmwareOutput? { if case .deviceFirmware(let value) = self { value } else { nil } }
    fileprivate var licensePhase: LicenseStateOutput? { if case .licensePhase(let value) = self { value } else { nil } }
    fileprivate var plan: PlanStateOutput? { if case .plan(let value) = self { value } else { nil } }
    fileprivate var aiSettings: AISettingsOutput? { if case .aiSettings(let value) = self { value } else { nil } }
    fileprivate var roleChanged: RoleChangeOutput? { if case .roleChanged(let value) = self { value } else { nil } }
    fileprivate var tokenRevoked: UserTokenRevokeOutput? { if case .tokenRevoked(let value) = self { value } else { nil } }
}
