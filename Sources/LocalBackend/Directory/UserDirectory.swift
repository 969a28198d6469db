import Foundation

/// The users the local backend knows: the source of truth for who may see which domain event.
///
/// Loaded from a JSON file shaped like `{"users":[{"id":"u-1","organizationId":"o-1","role":"member",
/// "deviceGroups":["g-1"]}]}`, or ``sample`` for demos and tests.
public struct UserDirectory: Sendable, Codable, Equatable {
    /// Every user, in file order.
    public var users: [DirectoryUser]

    /// Creates a directory.
    public init(users: [DirectoryUser]) { self.users = users }

    /// A small directory for demos and tests:
    ///
    /// | id | organization | role | device groups |
    /// |---|---|---|---|
    /// | `u-1` | `o-1` | member | `g-1` |
    /// | `u-2` | `o-1` | member | `g-2` |
    /// | `u-3` | `o-1` | admin | — (sees every group of `o-1`) |
    /// | `u-4` | `o-2` | member | `g-1` (same group name, other organization) |
    public static let sample = UserDirectory(users: [
        DirectoryUser(id: "u-1", organizationId: "o-1", role: "member", deviceGroups: ["g-1"]),
        DirectoryUser(id: "u-2", organizationId: "o-1", role: "member", deviceGroups: ["g-2"]),
        DirectoryUser(id: "u-3", organizationId: "o-1", role: DirectoryUser.adminRole, deviceGroups: []),
        DirectoryUser(id: "u-4", organizationId: "o-2", role: "member", deviceGroups: ["g-1"]),
    ])

    /// Reads a directory from a JSON file; throws ``UserDirectoryError`` when it is unreadable, malformed or lists
    /// a user id twice.
    public static func load(from path: String) throws -> UserDirectory {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw UserDirectoryError.unreadable(path: path, reason: error.localizedDescription)
        }
        let directory: UserDirectory
        do {
            directory = try JSONDecoder().decode(UserDirectory.self, from: data)
        } catch {
            throw UserDirectoryError.malformed(path: path, reason: String(describing: error))
        }
        var seen: Set<String> = []
        for user in directory.users where !seen.insert(user.id).inserted {
            throw UserDirectoryError.duplicateUser(user.id)
        }
        return directory
    }

    /// The user with `id`, if any.
    public func user(id: String) -> DirectoryUser? { users.first { $0.id == id } }

    /// Every user of `organizationId`.
    public func users(inOrganization organizationId: String) -> [DirectoryUser] {
        users.filter { $0.organizationId == organizationId }
    }
}

/// Why a ``UserDirectory`` could not be loaded.
public enum UserDirectoryError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file could not be read.
    case unreadable(path: String, reason: String)
    /// The file is not a directory document.
    case malformed(path: String, reason: String)
    /// Two users share an id.
    case duplicateUser(String)

    /// A readable description.
    public var description: String {
        switch self {
        case .unreadable(let path, let reason): "cannot read user directory \(path): \(reason)"
        case .malformed(let path, let reason): "malformed user directory \(path): \(reason)"
        case .duplicateUser(let id): "user directory lists \"\(id)\" twice"
        }
    }
}
