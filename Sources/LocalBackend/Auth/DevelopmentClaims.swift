import Foundation
import JWTKit

/// The claims of a development JWT: `sub` (the user id), `iat` and `exp`, as fractional seconds since 1970.
struct DevelopmentClaims: JWTPayload, Equatable {
    /// The user id.
    var sub: SubjectClaim
    /// When the token was issued (optional in tokens from elsewhere).
    var iat: IssuedAtClaim?
    /// When the token expires.
    var exp: ExpirationClaim

    /// Nothing here: the verifier checks `exp` and the fault cut-off itself, so it can say which failed.
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}
