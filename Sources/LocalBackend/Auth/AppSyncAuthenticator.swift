import Foundation

/// Establishes the caller's identity from an AppSync authorization object, in the mode its fields select:
///
/// - `x-api-key` — one of ``LocalBackendConfiguration/apiKeys``: a trusted backend identity;
/// - `Authorization: AWS4-HMAC-SHA256 …` — IAM, verified by ``IAMSignatureVerifier`` over the operation's body:
///   a trusted backend identity;
/// - any other `Authorization` — an HS256 JWT when ``LocalBackendConfiguration/jwtSecret`` is set (`sub` = user id,
///   `exp` enforced), else (or when it is not a valid JWT) the ``LocalBackendConfiguration/lambdaAuthorizer``.
///
/// `host` must name the server (its `HOST:PORT`) whenever it is present, as the service checks its own host. It is
/// required at connect (``HostRule/required``) and for IAM, whose signature covers it; in `subscribe` and `publish`
/// objects of the other modes it may be left out (``HostRule/optional``), as the AWS docs allow and as the official
/// Swift SDK and the docs' publish example do.
struct AppSyncAuthenticator: Sendable {
    /// Whether an authorization object must carry `host`.
    enum HostRule: Sendable {
        /// At connect (the `header-` subprotocol or upgrade headers) and for HTTP publish.
        case required
        /// In `subscribe` and `publish` messages: only IAM needs it.
        case optional
    }

    let apiKeys: Set<String>
    let iam: IAMSignatureVerifier
    let jwt: JWTVerifier?
    let lambda: (@Sendable (String) async -> String?)?
    let address: ServerAddress

    /// The identity behind `auth` for an operation whose signed body is `body`, or why it is refused.
    func authenticate(
        _ auth: AuthObject, body: String, host hostRule: HostRule = .required, now: Date = Date()
    ) async -> Result<CallerIdentity, AuthFailure> {
        guard auth.hasCredential else { return .failure(AuthFailure("No credentials: send x-api-key or Authorization")) }
        guard let expectedHost = address.hostAndPort else { return .failure(AuthFailure("The server is not listening yet")) }
        let host = auth["host"]
        if let host, !address.accepts(host) {
            return .failure(AuthFailure("The host in the authorization object does not match this API (expected \(expectedHost))"))
        }
        if host == nil && hostRule == .required { return .failure(AuthFailure("The authorization object has no host")) }
        if let key = auth["x-api-key"] {
            return apiKeys.contains(key) ? .success(.backend(.apiKey)) : .failure(AuthFailure("Invalid API key"))
        }
        guard let authorization = auth["authorization"], !authorization.isEmpty else {
            return .failure(AuthFailure("Empty Authorization"))
        }
        if authorization.hasPrefix(IAMSignatureVerifier.scheme + " ") {
            guard !iam.credentials.isEmpty else { return .failure(AuthFailure("IAM authorization is not enabled")) }
            guard let host else { return .failure(AuthFailure("IAM authorization needs host: the signature covers it")) }
            return iam.verify(auth, body: body, host: host, now: now)
        }
        var jwtFailure: AuthFailure?
        if let jwt, JWTVerifier.looksLikeJWT(authorization) {
            switch await jwt.verify(authorization, now: now) {
            case .success(let user): return .success(.user(user, via: .userPool))
            case .failure(let failure):
                // An expired or revoked token is final; a token this server did not sign may be the Lambda's.
                guard lambda != nil, failure.message.hasPrefix("Invalid") else { return .failure(failure) }
                jwtFailure = failure
            }
        }
        if let lambda {
            guard let user = await lambda(authorization), !user.isEmpty else {
                return .failure(AuthFailure("The Lambda authorizer denied the token"))
            }
            return .success(.user(user, via: .lambda))
        }
        return .failure(jwtFailure ?? AuthFailure(jwt == nil ? "No authorizer accepts this Authorization" : "Invalid token"))
    }
}
