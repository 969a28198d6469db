/// The state of an archive (`status` on `archive/stateChanged`).
///
/// The documents call `status` an enum but list no values: the four named cases (`Pending`, `Processing`,
/// `Ready`, `Failed`) are this package's choice, not the backend's contract. Tolerant: any other value decodes
/// as ``unknown(_:)`` instead of failing the event, and encodes back to the string it came from.
public enum ArchiveStatus: TolerantStringEnum {
    /// `Pending`: requested, not started.
    case pending
    /// `Processing`: being produced or uploaded.
    case processing
    /// `Ready`: available.
    case ready
    /// `Failed`: could not be produced.
    case failed
    /// A value not in this package's list, kept verbatim.
    case unknown(String)

    /// The values this package names (not documented by the backend).
    public static let knownCases: [ArchiveStatus] = [.pending, .processing, .ready, .failed]

    /// The status named `rawValue`; ``unknown(_:)`` for any other value (matching is case-sensitive).
    public init(rawValue: String) {
        self = Self.knownCases.first { $0.rawValue == rawValue } ?? .unknown(rawValue)
    }

    /// The wire value, such as `Ready`.
    public var rawValue: String {
        switch self {
        case .pending: "Pending"
        case .processing: "Processing"
        case .ready: "Ready"
        case .failed: "Failed"
        case .unknown(let value): value
        }
    }
}
