import Foundation
import JWTKit

/// Verifies HS256 JWTs (jwt-kit): signature, `exp`, and the fault injector's "expire every token issued before now".
struct JWTVerifier: Sendable {
    private let keys: JWTKeyCollection
    private let faults: FaultInjector

    private init(keys: JWTKeyCollection, faults: FaultInjector) {
        self.keys = keys
        self.faults = faults
    }

    /// A verifier for tokens signed with `secret`.
    static func make(secret: String, faults: FaultInjector) async -> JWTVerifier {
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        return JWTVerifier(keys: keys, faults: faults)
    }

    /// Whether `token` has the shape of a JWT (three dot-separated parts).
    static func looksLikeJWT(_ token: String) -> Bool { token.split(separator: ".", omittingEmptySubsequences: false).count == 3 }

    /// The user id (`sub`) of a valid token, or why it is refused.
    func verify(_ token: String, now: Date = Date()) async -> Result<String, AuthFailure> {
        let bare = token.hasPrefix("Bearer ") ? String(token.dropFirst("Bearer ".count)) : token
        let claims: DevelopmentClaims
        do {
            claims = try await keys.verify(bare, as: DevelopmentClaims.self)
        } catch let error as JWTError where error.errorType == .signatureVerificationFailed {
            return .failure(AuthFailure("Invalid token signature"))
        } catch {
            return .failure(AuthFailure("Invalid token"))
        }
        guard claims.exp.value > now else { return .failure(AuthFailure("Token expired")) }
        guard !faults.isExpiredByFault(issuedAt: claims.iat?.value) else {
            return .failure(AuthFailure("Token expired (expired by fault injection)"))
        }
        guard !claims.sub.value.isEmpty else { return .failure(AuthFailure("Token has no subject")) }
        return .success(claims.sub.value)
    }
}
