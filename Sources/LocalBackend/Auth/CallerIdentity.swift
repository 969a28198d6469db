/// Who made a request, as established by one of the AppSync authorization modes.
struct CallerIdentity: Sendable, Equatable, CustomStringConvertible {
    /// The authorization mode that established the identity.
    enum Mode: String, Sendable {
        case apiKey = "API_KEY"
        case userPool = "JWT"
        case lambda = "LAMBDA"
        case iam = "IAM"
    }

    /// How the caller authenticated.
    let mode: Mode
    /// The user id (JWT `sub`, or the Lambda authorizer's answer); `nil` for API key and IAM callers, which are
    /// trusted backend identities allowed on every channel (the backend publishes to every user's channel).
    let userID: String?

    /// A trusted backend identity.
    static func backend(_ mode: Mode) -> CallerIdentity { CallerIdentity(mode: mode, userID: nil) }

    /// A user identity.
    static func user(_ id: String, via mode: Mode) -> CallerIdentity { CallerIdentity(mode: mode, userID: id) }

    /// Names the mode and user, never a credential.
    var description: String { userID.map { "\(mode.rawValue) user \($0)" } ?? "\(mode.rawValue) backend" }
}
