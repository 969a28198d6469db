import VortexVocabulary

// The kinds of domain event the backend fans out are the client's nine (VortexVocabulary spells them once for both);
// what only the backend needs is who may see each.
extension VortexEventKind {
    /// Who may see an event of a kind.
    public enum Audience: Sendable, Equatable {
        /// Users of the organization permitted to see the device group (admins see every group).
        case deviceGroup
        /// Every user of the organization.
        case organization
        /// The one user the event is about.
        case user
    }

    /// Who may see events of this kind.
    public var audience: Audience {
        switch self {
        case .devicePresence, .deviceRecording, .deviceFirmware, .archiveState: .deviceGroup
        case .licensePhase, .plan, .aiSettings: .organization
        case .roleChanged, .tokenRevoked: .user
        }
    }
}
