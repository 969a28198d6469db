import Foundation

/// The optional `"protocols"` member of a `POST /vortex/events` body: the protocols a domain event is published on.
///
/// Absent: both (the backend's normal behaviour). `["appsync"]` or `["graphql"]` publishes a one-sided event, the
/// kind of divergence `vortex-realtime parity` must report as a mismatch. An empty list or an unknown name is refused
/// (400), never read as "both".
struct EventPublishTargets: Sendable, Decodable, Equatable {
    /// The protocols named, or every protocol when the member is absent.
    let protocols: Set<ConnectionRegistry.Kind>

    private enum CodingKeys: String, CodingKey { case protocols }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        guard let names = try container.decodeIfPresent([String].self, forKey: .protocols) else {
            protocols = [.appSyncEvents, .graphQL]
            return
        }
        var chosen: Set<ConnectionRegistry.Kind> = []
        for name in names {
            guard let kind = ConnectionRegistry.Kind(rawValue: name) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .protocols, in: container, debugDescription: "unknown protocol \"\(name)\" (expected appsync or graphql)")
            }
            chosen.insert(kind)
        }
        guard !chosen.isEmpty else {
            throw DecodingError.dataCorruptedError(
                forKey: .protocols, in: container, debugDescription: "an empty list publishes nowhere (omit it for both)")
        }
        protocols = chosen
    }
}
