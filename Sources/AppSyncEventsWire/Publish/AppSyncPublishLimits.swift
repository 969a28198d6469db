import Foundation
import SubscriberCore

/// The service's publish limits: the client checks them before anything is sent, the local backend when a publish
/// arrives.
package enum AppSyncPublishLimits {
    /// Events per publish.
    package static let maxEvents = 5
    /// Bytes per event (240 KB).
    package static let maxEventBytes = 240 * 1024

    /// Throws `RealtimeError/invalidPublish(_:)` unless there are 1 to 5 events, each valid JSON of at most 240 KB.
    package static func validate(_ events: [String]) throws(RealtimeError) {
        guard !events.isEmpty else { throw .invalidPublish("no events; send 1 to \(maxEvents)") }
        guard events.count <= maxEvents else { throw .invalidPublish("\(events.count) events; at most \(maxEvents) per publish") }
        for (index, event) in events.enumerated() {
            let size = event.utf8.count
            guard size <= maxEventBytes else {
                throw .invalidPublish("event \(index) is \(size) bytes; at most \(maxEventBytes)")
            }
            guard (try? JSONSerialization.jsonObject(with: Data(event.utf8), options: [.fragmentsAllowed])) != nil else {
                throw .invalidPublish("event \(index) is not valid JSON")
            }
        }
    }
}
