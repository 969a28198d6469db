import SubscriberCore

/// AppSync Events channel naming rules: the client checks them before anything is sent, the local backend when a
/// `subscribe` or `publish` arrives.
///
/// The service's published pattern is
/// `^\/?[A-Za-z0-9](?:[A-Za-z0-9-]{0,48}[A-Za-z0-9])?(?:\/[A-Za-z0-9](?:[A-Za-z0-9-]{0,48}[A-Za-z0-9])?){0,4}\/?$`:
///
/// - A channel is `namespace/segment/...`: 1 to 5 segments including the namespace.
/// - Every segment, the namespace included, is 1 to 50 characters of `A-Z a-z 0-9 -` that starts and ends with a
///   letter or digit.
/// - One leading and one trailing `/` are optional (`/default/a/` is `default/a`).
/// - A final `/*` (wildcard) is allowed only to subscribe, never as the namespace nor followed by `/`; it counts as
///   one of the 5 segments.
package enum ChannelName {
    /// The most segments a channel may have, namespace included.
    package static let maxSegments = 5
    /// The longest a segment may be.
    package static let maxSegmentLength = 50

    /// What the channel is used for: wildcards are for subscribing only.
    package enum Use: Sendable {
        /// Subscribing: a final `/*` is allowed.
        case subscribe
        /// Publishing: no wildcard.
        case publish
    }

    /// Returns the channel without its optional leading and trailing `/`, or throws
    /// `RealtimeError/invalidChannel(_:reason:)`.
    @discardableResult
    package static func validate(_ channel: String, for use: Use) throws(RealtimeError) -> String {
        var trimmed = Substring(channel)
        if trimmed.hasPrefix("/") { trimmed = trimmed.dropFirst() }
        if trimmed.hasSuffix("/") {
            trimmed = trimmed.dropLast()
            // The pattern allows a trailing "/" after a segment; a wildcard must be the very end ("/*").
            if trimmed.hasSuffix("*") { throw .invalidChannel(channel, reason: "a wildcard channel must end in /*") }
        }
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
            if let problem = segmentProblem(segment) {
                throw .invalidChannel(channel, reason: "segment \"\(segment)\" \(problem)")
            }
        }
        return String(trimmed)
    }

    /// Whether `channel` ends in a wildcard segment.
    package static func isWildcard(_ channel: String) -> Bool { channel.hasSuffix("/*") }

    /// Why `segment` breaks `[A-Za-z0-9](?:[A-Za-z0-9-]{0,48}[A-Za-z0-9])?`, or `nil` when it matches.
    static func segmentProblem(_ segment: Substring) -> String? {
        if segment.count > maxSegmentLength { return "is longer than \(maxSegmentLength) characters" }
        if !segment.unicodeScalars.allSatisfy(isAllowed) { return "may contain only A-Z, a-z, 0-9 and '-'" }
        if segment.hasPrefix("-") || segment.hasSuffix("-") { return "must start and end with a letter or digit" }
        return nil
    }

    private static func isAllowed(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9", "-": true
        default: false
        }
    }
}
