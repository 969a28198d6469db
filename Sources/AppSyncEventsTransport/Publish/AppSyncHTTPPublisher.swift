import Foundation
import SubscriberCore

/// Publishes over HTTP: `POST https://<host>/event` with the auth headers and `{"channel":…,"events":[…]}`.
public struct AppSyncHTTPPublisher: Sendable {
    /// The API's endpoint.
    public let endpoint: AppSyncEndpoint
    private let client: any HTTPClient

    /// Creates a publisher.
    public init(endpoint: AppSyncEndpoint, client: any HTTPClient = URLSessionHTTPClient()) {
        self.endpoint = endpoint
        self.client = client
    }

    /// Publishes and returns the per-event result; a non-2xx answer throws `RealtimeError/publishRejected(errorType:message:)`.
    public func publish(channel: String, events: [String], authorizer: AppSyncAuthorizer) async throws -> PublishResult {
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
            throw RealtimeError.publishRejected(
                errorType: error?.errorType ?? "HTTP \(response.status)",
                message: error?.message ?? String(decoding: response.body.prefix(300), as: UTF8.self))
        }
        struct Reply: Decodable {
            var successful: [PublishedEvent]?
            var failed: [FailedEvent]?
        }
        do {
            let reply = try JSONDecoder().decode(Reply.self, from: response.body)
            return PublishResult(successful: reply.successful ?? [], failed: reply.failed ?? [])
        } catch {
            throw RealtimeError.protocolViolation("malformed HTTP publish response: \(error)")
        }
    }
}
