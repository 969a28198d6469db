/// An authorization refusal: always reported as `UnauthorizedException`. The message never contains a credential.
struct AuthFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// Why the credentials were refused, for example `Token expired` or `Signature mismatch`.
    let message: String

    init(_ message: String) { self.message = message }

    var description: String { message }

    /// The AppSync error entry for this refusal.
    var entry: AppSyncErrorEntry { .unauthorized(message) }
}
