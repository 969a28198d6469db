/// Who the drill and the parity check sign in as: the user, their organization and, where device filtering needs one,
/// a device group the user may see.
public struct DrillIdentity: Sendable, Codable, Equatable {
    /// The user id (the token's subject, the `{userId}` of the AppSync channels).
    public var user: String
    /// The user's organization; organization events are made and judged only with it.
    public var organization: String?
    /// A device group (site) the user may see; device and archive events are made (trigger `admin`) only with it.
    public var deviceGroup: String?

    /// Creates an identity.
    public init(user: String, organization: String?, deviceGroup: String? = nil) {
        self.user = user
        self.organization = organization
        self.deviceGroup = deviceGroup
    }

    /// `u-1` of `o-1`, who sees `g-1`, in the local backend's sample directory.
    public static let sample = DrillIdentity(user: "u-1", organization: "o-1", deviceGroup: "g-1")
}
