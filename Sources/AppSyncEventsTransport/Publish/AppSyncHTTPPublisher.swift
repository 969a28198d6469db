import AppSyncEventsWire
import Foundation
import SubscriberCore

/// Publishes over HTTP: `POST https://<host>/event` with the auth headers and `{"channel":…,"events":[…]}`.
package struct AppSyncHTTPPublisher: Sendable {
    /// The API's endpoint.
    package let endpoint: AppSyncEndpoint
    private let client: any HTTPClient

    /// How one `POST` went.
    enum Outcome {
        case published(PublishResult)
        /// Refused as unauthorized: HTTP 401 or 403, or an auth error in the body.
        case unauthorized(AppSyncServerError)
    }

    /// Creates a publisher.
    package init(endpoint: AppSyncEndpoint, client: any HTTPClient = URLSessionHTTPClient()) {
        self.endpoint = endpoint
        self.client = client
    }

    /// Publishes and returns the per-event result; a non-2xx answer throws `RealtimeError/publishRejected(errorType:message:)`.
    package func publish(channel: String, events: [String], authorizer: AppSyncAuthorizer) async throws -> PublishResult {
        switch try await send(channel: channel, events: events, authorizer: authorizer) {
        case .published(let result): return result
        case .unauthorized(let error): throw RealtimeError.publishRejected(errorType: error.errorType, message: error.message)
        }
    }

    /// Publishes with credentials asked of `auth` now; refused as unauthorized, once more with refreshed credentials
    /// (`forceRefresh: true`). Refused again, it throws `publishRejected` naming the channel and the reason; a
    /// signed-out session throws `signedOut`, one that cannot give credentials `sessionExpired`.
    ///
    /// Each request for credentials waits at most `credentialsTimeout` on `clock` (the transport passes its link's
    /// `ackTimeout`, the bound of the WebSocket path's own requests): a session silent that long throws
    /// `RealtimeError/network(_:)` ("the AuthSession gave no credentials within …"), and nothing is posted. A
    /// cancelled caller throws `CancellationError` at once, even while the session hangs (the session's call is left
    /// to end on its own; see `credentialsForSending(forceRefresh:)`).
    func publish(
        channel: String, events: [String], auth: any AuthSession, wallClock: WallClock, credentialsTimeout: Duration,
        clock: any Clock<Duration>
    ) async throws -> PublishResult {
        let channel = try ChannelName.validate(channel, for: .publish)
        try AppSyncPublishLimits.validate(events)
        var refusal: AppSyncServerError?
        for forceRefresh in [false, true] {
            // `.awaitOperation`: `credentialsForSending` answers `.cancelled` as soon as it is cancelled, whatever the
            // session does, so waiting for it never holds this call up.
            let answer = await withDeadline(credentialsTimeout, on: clock, mode: .awaitOperation) {
                await auth.credentialsForSending(forceRefresh: forceRefresh)
            }
            let credentials: AuthCredentials
            switch answer {
            case .credentials(let fetched): credentials = fetched
            case .signedOut: throw RealtimeError.signedOut
            case .unavailable(let error): throw RealtimeError.sessionExpired("credentials unavailable to publish to \(channel): \(error)")
            case .cancelled: throw CancellationError()
            case nil:
                // The timer won; a caller cancelled at that very moment still gets its CancellationError.
                try Task.checkCancellation()
                throw RealtimeError.network("the AuthSession gave no credentials within \(credentialsTimeout) to publish to \(channel)")
            }
            let authorizer = AppSyncAuthorizer(endpoint: endpoint, credentials: credentials, now: { wallClock.now() })
            switch try await send(channel: channel, events: events, authorizer: authorizer) {
            case .published(let result): return result
            case .unauthorized(let error): refusal = error
            }
        }
        let error = refusal ?? AppSyncServerError(errorType: "UnauthorizedException")
        throw error.refusedAfterRefresh(.publish, channel: channel)
    }

    /// One `POST`: the result, or the auth refusal; any other failure throws.
    func send(channel: String, events: [String], authorizer: AppSyncAuthorizer) async throws -> Outcome {
        let channel = try ChannelName.validate(channel, for: .publish)
        try AppSyncPublishLimits.validate(events)
        let body = AppSyncOutboundMessage.publishBody(channel: channel, events: events)
        var headers = authorizer.authorization(body: body)
        headers["content-type"] = headers["content-type"] ?? "application/json"
        let response: (status: Int, body: Data)
        do {
            response = try await client.post(url: endpoint.httpURL, headers: headers, body: Data(body.utf8))
        } catch {
            throw RealtimeError.network("HTTP publish failed: \(error.localizedDescription)")
        }
        guard (200..<300).contains(response.status) else {
            let error = AppSyncServerError.decodeErrors(from: response.body).first
            let rejection = AppSyncServerError(
                errorType: error?.errorType ?? "HTTP \(response.status)",
                message: error?.message ?? String(decoding: response.body.prefix(300), as: UTF8.self))
            if response.status == 401 || response.status == 403 || error?.isAuthFailure == true { return .unauthorized(rejection) }
            throw RealtimeError.publishRejected(errorType: rejection.errorType, message: rejection.message)
        }
        return .published(try PublishResult(appSyncReply: response.body, eventCount: events.count))
    }
}
