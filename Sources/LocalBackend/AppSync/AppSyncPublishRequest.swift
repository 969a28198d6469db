import AppSyncEventsWire
import Foundation
import SubscriberCore

/// A publish (WebSocket `publish` or HTTP `POST /event`) checked against the service's rules.
///
/// Request-level problems refuse the whole publish (`publish_error`, HTTP 400): a channel that breaks the naming
/// rules or is a wildcard, a missing namespace, `events` that is not 1 to 5 strings, an event over 240 KB.
/// An event that is not valid JSON fails on its own (a `failed` entry with code 400); the others go out.
struct AppSyncPublishRequest: Sendable {
    /// The channel exactly as the client sent it (what IAM signed).
    let rawChannel: String
    /// The channel without a leading `/`.
    let channel: String
    /// The events, each a JSON-encoded string.
    let events: [String]

    /// Parses the `channel` and `events` members of a decoded message or body.
    static func parse(channel: Any?, events: Any?, namespaces: Set<String>) -> Result<AppSyncPublishRequest, AppSyncErrorEntry> {
        guard let rawChannel = channel as? String, let validated = try? ChannelName.validate(rawChannel, for: .publish) else {
            return .failure(.invalidChannel)
        }
        if let error = ChannelAccess.namespaceError(validated, namespaces: namespaces) { return .failure(error) }
        guard let array = events as? [Any] else { return .failure(.badRequest("events must be an array of JSON-encoded strings")) }
        var strings: [String] = []
        for element in array {
            guard let text = element as? String else { return .failure(.badRequest("events must be an array of JSON-encoded strings")) }
            strings.append(text)
        }
        guard (1...AppSyncPublishLimits.maxEvents).contains(strings.count) else {
            return .failure(.badRequest("\(strings.count) events; a publish carries 1 to \(AppSyncPublishLimits.maxEvents)"))
        }
        for (index, event) in strings.enumerated() where event.utf8.count > AppSyncPublishLimits.maxEventBytes {
            return .failure(
                .badRequest(
                    "Event \(index) is \(event.utf8.count) bytes; the limit is \(AppSyncPublishLimits.maxEventBytes) bytes (240 KB)"))
        }
        return .success(AppSyncPublishRequest(rawChannel: rawChannel, channel: validated, events: strings))
    }

    /// The body IAM signs for this publish over WebSocket: `{"channel":…,"events":[…]}`, canonical.
    var signingBody: String {
        JSONString.object([
            (key: "channel", json: JSONString.quoted(rawChannel)),
            (key: "events", json: JSONString.array(events.map(JSONString.quoted))),
        ])
    }

    /// The per-event outcome (each event gets a fresh UUID identifier) and the events to deliver, in order.
    func evaluate() -> (result: PublishResult, deliverable: [String]) {
        var successful: [PublishedEvent] = []
        var failed: [FailedEvent] = []
        var deliverable: [String] = []
        for (index, event) in events.enumerated() {
            let identifier = UUID().uuidString.lowercased()
            if (try? JSONSerialization.jsonObject(with: Data(event.utf8), options: [.fragmentsAllowed])) != nil {
                successful.append(PublishedEvent(identifier: identifier, index: index))
                deliverable.append(event)
            } else {
                failed.append(FailedEvent(identifier: identifier, index: index, code: 400, message: "Event is not valid JSON"))
            }
        }
        return (PublishResult(successful: successful, failed: failed), deliverable)
    }
}
