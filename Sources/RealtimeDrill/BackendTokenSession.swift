import SubscriberCore

/// The drill's user's token from the backend that mints it (the embedded backend, or a remote one given `--token`).
struct BackendTokenSession: AuthSession {
    let backend: any DrillBackend
    let user: String

    func isSignedIn() async -> Bool { true }
    func credentials(forceRefresh: Bool) async throws -> AuthCredentials { .bearerToken(try backend.token(for: user)) }
}
