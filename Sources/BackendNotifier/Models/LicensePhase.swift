/// The phase of an organization's licence (`licensePhase` on `organization/licensePhaseChanged`).
///
/// Tolerant: a value this version does not know decodes as ``unknown(_:)`` instead of failing the event, and
/// every value encodes back to the string it came from.
public enum LicensePhase: TolerantStringEnum {
    /// `SetupStatus`: the licence is being set up.
    case setupStatus
    /// `Valid`: the licence is in force.
    case valid
    /// `NoticePeriod`: the licence is about to expire.
    case noticePeriod
    /// `GracePeriod`: the licence has expired; service continues for a grace period.
    case gracePeriod
    /// `RenewalOverdue`: the grace period is over and renewal is overdue.
    case renewalOverdue
    /// `Invalid`: the licence is not valid.
    case invalid
    /// A value the documents do not list, kept verbatim.
    case unknown(String)

    /// The documented values, in the documents' order.
    public static let knownCases: [LicensePhase] = [
        .setupStatus, .valid, .noticePeriod, .gracePeriod, .renewalOverdue, .invalid,
    ]

    /// The phase named `rawValue`; ``unknown(_:)`` for any value not documented (matching is case-sensitive).
    public init(rawValue: String) {
        self = Self.knownCases.first { $0.rawValue == rawValue } ?? .unknown(rawValue)
    }

    /// The wire value, such as `GracePeriod`.
    public var rawValue: String {
        switch self {
        case .setupStatus: "SetupStatus"
        case .valid: "Valid"
        case .noticePeriod: "NoticePeriod"
        case .gracePeriod: "GracePeriod"
        case .renewalOverdue: "RenewalOverdue"
        case .invalid: "Invalid"
        case .unknown(let value): value
        }
    }
}
