import Foundation
import SubscriberCore

extension PublishResult {
    /// Reads the reply to a publish of `eventCount` events: `publish_success` or the HTTP `POST /event` answer, both
    /// `{"successful":[…],"failed":[…]}`. Events it lists neither as accepted nor as refused are `unaccounted`, so a
    /// reply that leaves some out never reads as all succeeded. Undecodable, it throws `protocolViolation`.
    init(appSyncReply data: Data, eventCount: Int) throws(RealtimeError) {
        struct Reply: Decodable {
            var successful: [PublishedEvent]?
            var failed: [FailedEvent]?
        }
        let reply: Reply
        do { reply = try JSONDecoder().decode(Reply.self, from: data) } catch {
            throw .protocolViolation("malformed publish reply: \(error)")
        }
        let (successful, failed) = (reply.successful ?? [], reply.failed ?? [])
        let listed = Set(successful.map(\.index) + failed.map(\.index))
        self.init(successful: successful, failed: failed, unaccounted: (0..<eventCount).filter { !listed.contains($0) })
    }
}
