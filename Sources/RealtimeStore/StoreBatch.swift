import BackendNotifier

/// What one hop to the main actor carries: the state as it is now, and which parts of it changed since the last hop
/// (only those are assigned, so a view that reads an unchanged part is not invalidated).
struct StoreBatch: Sendable {
    struct Parts: OptionSet, Sendable {
        let rawValue: Int
        static let devices = Parts(rawValue: 1)
        static let organization = Parts(rawValue: 2)
        static let roleChange = Parts(rawValue: 4)
        static let tokenRevocation = Parts(rawValue: 8)
        static let stale = Parts(rawValue: 16)
        static let failure = Parts(rawValue: 32)
        /// Only the counts changed (events dropped as older or duplicates): they reach the main actor too.
        static let statistics = Parts(rawValue: 64)
        static let all: Parts = [.devices, .organization, .roleChange, .tokenRevocation, .stale, .failure, .statistics]

        /// The part of the state that holds `kind`.
        init(holding kind: VortexEventKind) {
            switch kind {
            case .devicePresence, .deviceRecording, .deviceFirmware: self = .devices
            case .licensePhase, .plan, .aiSettings: self = .organization
            case .roleChanged: self = .roleChange
            case .tokenRevoked: self = .tokenRevocation
            case .archiveState: self = []
            }
        }

        init(rawValue: Int) { self.rawValue = rawValue }
    }

    /// The identity generation it was drained in.
    let generation: Int
    let snapshot: StoreSnapshot
    let changed: Parts
    let stale: Set<VortexEventKind>
    let statistics: StoreStatistics
    let failure: BackfillFailure?
}
