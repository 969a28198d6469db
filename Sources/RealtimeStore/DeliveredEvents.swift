import BackendNotifier
import Foundation

/// Which events of the event kinds (archive, role change, revocation) the store's value streams have delivered, so a
/// backfill returning one again does not deliver it twice.
///
/// Events carry no id, and the same event may not compare equal field by field (the decoder fills `deviceGroupID` from
/// `siteId`, a backfill may spell a timestamp with fractional seconds), so an event is identified by what it says:
/// which thing changed, to what, and when (timestamps as instants). An event without a timestamp cannot be told from
/// another that says the same: the feed delivers such a live event each time (see ``Identity/hasInstant``).
///
/// Bounded: it remembers the newest `limit` events per identity generation and forgets the oldest first, so a backfill
/// returning an event older than that memory delivers it again.
struct DeliveredEvents: Sendable {
    /// An event of an event kind, by what it says.
    enum Identity: Hashable, Sendable {
        /// A device's archive (by its creation) reached a status at an instant.
        case archive(thingName: String?, createdAt: Date?, status: String?, at: Date?)
        /// The user's role changed, for a reason, at an instant.
        case role(reason: String?, at: Date?)
        /// A user's tokens were revoked at an instant (by a request).
        case revocation(userId: String, revokedAt: Date?, requestId: String?, at: Date?)

        /// `nil` for the state kinds, whose rule is the ledger's (newest per entity).
        init?(_ event: VortexEvent) {
            switch event {
            case .archiveState(let output):
                self = .archive(
                    thingName: output.thingName, createdAt: output.createdDate, status: output.status?.rawValue, at: output.date)
            case .roleChanged(let output): self = .role(reason: output.reason, at: output.date)
            case .tokenRevoked(let output):
                self = .revocation(userId: output.userId, revokedAt: output.revokedDate, requestId: output.requestId, at: output.date)
            case .devicePresence, .deviceRecording, .deviceFirmware, .licensePhase, .plan, .aiSettings: return nil
            }
        }

        /// Whether it says when it happened. Without an instant, two distinct events may say the same (legacy GraphQL
        /// role changes select only a nullable `reason`): a live one is delivered each time, never taken for a repeat.
        var hasInstant: Bool {
            switch self {
            case .archive(_, _, _, let at), .role(_, let at), .revocation(_, _, _, let at): at != nil
            }
        }
    }

    static let defaultLimit = 4_096

    let limit: Int
    private var members: Set<Identity> = []
    /// The remembered identities, oldest at `oldest` once the ring is full.
    private var ring: [Identity] = []
    private var oldest = 0

    init(limit: Int = Self.defaultLimit) { self.limit = max(1, limit) }

    /// Remembers `identity`; `false` if it was delivered before.
    mutating func firstDelivery(_ identity: Identity) -> Bool {
        guard members.insert(identity).inserted else { return false }
        if ring.count < limit {
            ring.append(identity)
        } else {
            members.remove(ring[oldest])
            ring[oldest] = identity
            oldest = (oldest + 1) % limit
        }
        return true
    }
}
