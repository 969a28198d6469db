/// The app's authentication state, asked anew before every connection attempt (tokens expire).
public protocol AuthSession: Sendable {
    /// Whether the user is signed in. A transport never reconnects for a signed-out user.
    func isSignedIn() async -> Bool

    /// Fresh credentials for the next connection attempt (and for subscribe/publish authorization on it).
    ///
    /// - Parameter forceRefresh: `true` after the server rejected the previous credentials:
    ///   refresh the token instead of returning a cached one.
    func credentials(forceRefresh: Bool) async throws -> AuthCredentials
}

/// Credentials in the forms the two backends accept.
public enum AuthCredentials: Sendable, Equatable {
    /// An AppSync API key (`x-api-key`).
    case apiKey(String)
    /// A Cognito user-pool or OIDC JWT, sent as `Authorization` (AppSync) or in `connection_init` (GraphQL).
    case bearerToken(String)
    /// A token for an AppSync Lambda authorizer, sent as `Authorization`.
    case lambdaToken(String)
    /// AWS credentials for IAM (SigV4) authorization.
    case iam(AWSCredentials)
}

extension AuthCredentials: CustomStringConvertible {
    /// Names the kind only: secrets never reach a log line.
    public var description: String {
        switch self {
        case .apiKey: "apiKey(<redacted>)"
        case .bearerToken: "bearerToken(<redacted>)"
        case .lambdaToken: "lambdaToken(<redacted>)"
        case .iam(let credentials): "iam(\(credentials))"
        }
    }
}

/// AWS credentials for SigV4 signing.
public struct AWSCredentials: Sendable, Equatable, CustomStringConvertible {
    /// The access key id (not secret, but kept out of logs all the same).
    public var accessKeyID: String
    /// The secret access key.
    public var secretAccessKey: String
    /// The session token of temporary credentials.
    public var sessionToken: String?
    /// The region to sign for, for example `us-east-1`.
    public var region: String

    /// Creates credentials.
    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil, region: String) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
        self.region = region
    }

    public var description: String { "AWSCredentials(region: \(region), <redacted>)" }
}

/// An ``AuthSession`` with fixed credentials that is always signed in: for tools, tests and API-key apps.
public struct StaticAuthSession: AuthSession {
    /// The credentials returned for every attempt.
    public let fixedCredentials: AuthCredentials

    /// Creates a session.
    public init(_ credentials: AuthCredentials) { self.fixedCredentials = credentials }

    /// Always `true`.
    public func isSignedIn() async -> Bool { true }

    /// The fixed credentials.
    public func credentials(forceRefresh: Bool) async throws -> AuthCredentials { fixedCredentials }
}
