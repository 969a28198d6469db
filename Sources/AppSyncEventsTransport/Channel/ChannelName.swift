import SubscriberCore

/// AppSync Events channel naming rules, checked before anything is sent.
///
/// - A channel is `namespace/segment/...`: 1 to 5 segments including the namespace; a leading `/` is optional.
/// - The namespace matches `[A-Za-z0-9](?:[A-Za-z0-9-]{0,48}[A-Za-z0-9])?` (the service's published pattern).
/// - Other segments are 1 to 50 characters of `A-Z a-z 0-9 -`.
/// - A final `*` segment (wildcard) is allowed only to subscribe, and not as the namespace.
public enum ChannelName {
    /// The most segments a channel may have, namespace included.
    public static let maxSegments = 5
    /// The longest a segment may be.
    public static let maxSegmentLength = 50

    /// What the channel is used for: wildcards are for subscribing only.
    public enum Use: Sendable {
        /// Subscribing: a final `/*` is allowed.
        case subscribe
        /// Publishing: no wildcard.
        case publish
    }

    /// Returns the channel without a leading `/`, or throws `RealtimeError/invalidChannel(_:reason:)`.
    @discardableResult
    public static func validate(_ channel: String, for use: Use) throws(RealtimeError) -> String {
        let trimmed = channel.hasPrefix("/") ? String(channel.dropFirst()) : channel
        guard !trimmed.isEmpty else { throw .invalidChannel(channel, reason: "empty") }
        let segments = trimmed.split(separator: "/", omittingEmptySubsequences: false)
        guard segments.count <= maxSegments else {
            throw .invalidChannel(channel, reason: "\(segments.count) segments; at most \(maxSegments) including the namespace")
        }
        for (index, segment) in segments.enumerated() {
            guard !segment.isEmpty else { throw .invalidChannel(channel, reason: "empty segment at position \(index + 1)") }
            if segment == "*" {
                guard index > 0 else { throw .invalidChannel(channel, reason: "the namespace cannot be a wildcard") }
                guard index == segments.count - 1 else { throw .invalidChannel(channel, reason: "'*' is allowed only as the last segment") }
                guard use == .subscribe else { throw .invalidChannel(channel, reason: "cannot publish to a wildcard channel") }
                continue
            }
            guard segment.count <= maxSegmentLength else {
                throw .invalidChannel(channel, reason: "segment \"\(segment)\" is longer than \(maxSegmentLength) characters")
            }
            guard segment.unicodeScalars.allSatisfy(isAllowed) else {
                throw .invalidChannel(channel, reason: "segment \"\(segment)\" may contain only A-Z, a-z, 0-9 and '-'")
            }
            if index == 0 && (segment.hasPrefix("-") || segment.hasSuffix("-")) {
                throw .invalidChannel(channel, reason: "the namespace cannot start or end with '-'")
            }
        }
        return trimmed
    }

    /// Whether `channel` ends in a wildcard segment.
    public static func isWildcard(_ channel: String) -> Bool { channel.hasSuffix("/*") }

    private static func isAllowed(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9", "-": true
        default: false
        }
    }
}
