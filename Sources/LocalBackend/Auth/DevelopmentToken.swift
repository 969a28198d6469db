import AppSyncEventsWire
import Crypto
import Foundation
import SubscriberCore

/// Makes HS256 JWTs the local backend accepts (configure the same secret as ``LocalBackendConfiguration/jwtSecret``):
/// `sub` = the user id, `iat` = now, `exp` = now + `ttl`.
public enum DevelopmentToken {
    /// The shortest HS256 secret accepted: 32 bytes, the size of the hash output (RFC 7518 §3.2).
    public static let minimumSecretBytes = 32

    /// Why a token could not be made.
    public enum Failure: Error, Sendable, Equatable {
        /// The secret is shorter than ``DevelopmentToken/minimumSecretBytes``.
        case secretTooShort
        /// The user id is empty.
        case emptyUser
        /// The time to live is not positive.
        case nonPositiveTTL
    }

    /// An HS256 JWT for `user`, valid for `ttl` from now.
    public static func make(secret: String, user: String, ttl: Duration) throws -> String {
        try make(secret: secret, user: user, issuedAt: Date(), ttl: ttl)
    }

    /// An HS256 JWT for `user` issued at `issuedAt` and valid for `ttl` from then (tests use a past `issuedAt` for
    /// expired tokens).
    public static func make(secret: String, user: String, issuedAt: Date, ttl: Duration) throws -> String {
        guard secret.utf8.count >= minimumSecretBytes else { throw Failure.secretTooShort }
        guard !user.isEmpty else { throw Failure.emptyUser }
        guard ttl > .zero else { throw Failure.nonPositiveTTL }
        let seconds = Double(ttl.components.seconds) + Double(ttl.components.attoseconds) / 1e18
        let issued = issuedAt.timeIntervalSince1970
        let header = #"{"alg":"HS256","typ":"JWT"}"#
        let payload = JSONString.object([
            (key: "sub", json: JSONString.quoted(user)),
            (key: "iat", json: "\(issued)"),
            (key: "exp", json: "\(issued + seconds)"),
        ])
        let signingInput = Base64URL.encode(Data(header.utf8)) + "." + Base64URL.encode(Data(payload.utf8))
        let signature = HMAC<SHA256>.authenticationCode(for: Data(signingInput.utf8), using: SymmetricKey(data: Data(secret.utf8)))
        return signingInput + "." + Base64URL.encode(Data(signature))
    }
}
