/// One user of the local backend's directory: who they are, their organization, their role and the device groups
/// (sites) they may see.
public struct DirectoryUser: Sendable, Codable, Equatable, Hashable {
    /// The role that sees every device group of its organization.
    public static let adminRole = "admin"

    /// The user id: the JWT `sub`, and the `{userId}` in `vortex-app/user/{userId}/…`.
    public var id: String
    /// The organization the user belongs to.
    public var organizationId: String
    /// The user's role, for example `admin` or `member`.
    public var role: String
    /// The device groups (sites) the user is permitted to see.
    public var deviceGroups: [String]

    /// Creates a user.
    public init(id: String, organizationId: String, role: String, deviceGroups: [String]) {
        self.id = id
        self.organizationId = organizationId
        self.role = role
        self.deviceGroups = deviceGroups
    }

    /// Whether the user may see events of `deviceGroupId` in `organizationId`: same organization, and either the
    /// group is one of theirs or their role is ``adminRole``.
    public func canSee(deviceGroup deviceGroupId: String, in organizationId: String) -> Bool {
        guard self.organizationId == organizationId else { return false }
        return role == Self.adminRole || deviceGroups.contains(deviceGroupId)
    }
}
