/// What asking an ``AuthSession`` for credentials just before sending something gave.
package enum SendTimeCredentials: Sendable {
    /// Credentials to authorize with.
    case credentials(AuthCredentials)
    /// ``AuthSession/isSignedIn()`` said no: send nothing for this user.
    case signedOut
    /// ``AuthSession/credentials(forceRefresh:)`` threw.
    case unavailable(any Error)
    /// The asking task was cancelled before the session answered.
    case cancelled

    /// Whether the session said the user is signed out.
    package var isSignedOut: Bool {
        if case .signedOut = self { true } else { false }
    }
}

extension AuthSession {
    /// Asks whether the user is signed in and, if so, for credentials, as a transport does before authorizing a batch
    /// of messages.
    ///
    /// The session is called from a task of its own, cancelled when the caller is: the caller gets ``SendTimeCredentials/cancelled``
    /// at once even if the session ignores cancellation, so a session that hangs cannot hold a link's scope open
    /// after it was asked to end. (The session's task then ends whenever the session returns; it holds nothing of the
    /// link.)
    package func credentialsForSending(forceRefresh: Bool) async -> SendTimeCredentials {
        let outcome = OneShotSignal<SendTimeCredentials>()
        let call = Task { outcome.fire(await answer(forceRefresh: forceRefresh)) }
        let given = await withTaskCancellationHandler {
            await outcome.wait()
        } onCancel: {
            call.cancel()
        }
        return given ?? .cancelled
    }

    /// One call's answer: whether the user is signed in and, if so, credentials (or why there are none).
    package func answer(forceRefresh: Bool) async -> SendTimeCredentials {
        guard await isSignedIn() else { return .signedOut }
        do {
            return .credentials(try await credentials(forceRefresh: forceRefresh))
        } catch {
            return .unavailable(error)
        }
    }
}
