/// The app's authentication state. A transport asks it before every connection attempt and again for every batch of
/// messages it authorizes (AppSync `subscribe`, WebSocket `publish`, HTTP publish), so a link that outlives its token
/// keeps working: tokens expire, connections last up to 24 hours.
///
/// **Caching.** `credentials(forceRefresh: false)` is called often (at least once per connection attempt and per
/// batch of subscribes and publishes), so an implementation should answer from a cache, and refresh only shortly
/// before the token expires. For a JWT (Cognito, OIDC) the expiry is the `exp` claim of the payload, the second
/// dot-separated part, base64url-encoded JSON: seconds since 1970. ``JWTTokenCache`` does exactly this: it keeps a
/// token until `refreshMargin` (default 60 s) before its `exp`, and asks the app's token source again after that. A
/// token whose expiry cannot be read is not cached.
///
/// **`forceRefresh`.** `true` means the server has just refused credentials this session gave out (an AppSync
/// `connection_error`, `subscribe_error` or `publish_error` with an auth error type or "Token expired", an HTTP
/// 401/403, a graphql-transport-ws 4403): bypass every cache and get a new token from the identity provider (with
/// Amplify, `fetchAuthSession(options: .forceRefresh())`). Each refusal is retried once with `forceRefresh: true`; a
/// second refusal is final: at connect every stream ends with `RealtimeError/sessionExpired(_:)`, for a subscribe or
/// publish only that subscription or publish fails.
///
/// **Throwing** means no credentials can be had now, for a reason that may pass (offline, DNS not ready) or not (the
/// refresh token expired, the user must sign in again). At connect the transport retries after its reconnect policy's
/// backoff, reporting `reconnecting` (each retry counts toward the policy's attempt limit), or, without a network,
/// when the network is back; after 5 throws in a row with a network (no attempt between them got credentials) it
/// stops with `RealtimeError/sessionExpired(_:)`. Before a subscribe or publish, that subscription or publish fails
/// with it. Return `false` from ``isSignedIn()`` once the user signed out: the transport neither reconnects (it stops
/// at its next attempt) nor sends new subscribes or publishes for them (those fail with `RealtimeError/signedOut`).
///
/// The transports never log what this returns.
public protocol AuthSession: Sendable {
    /// Whether the user is signed in. A transport never reconnects, subscribes or publishes for a signed-out user.
    func isSignedIn() async -> Bool

    /// Credentials valid now, for a connection attempt or for the batch of subscribes and publishes about to be sent.
    /// Cache them (see ``JWTTokenCache``): this is called often.
    ///
    /// - Parameter forceRefresh: `true` after the server refused the credentials this session gave out: refresh the
    ///   token instead of returning a cached one.
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
