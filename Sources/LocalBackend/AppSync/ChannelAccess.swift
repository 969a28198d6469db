/// Channel-level rules the local backend enforces on top of the naming rules (``ChannelName``).
enum ChannelAccess {
    /// The namespace whose `user/{userId}/…` channels belong to one user each.
    static let userNamespace = "vortex-app"

    /// Whether `identity` may subscribe or publish to `channel` (validated, no leading `/`).
    ///
    /// Trusted backend identities (API key, IAM) may use every channel. A user may use `vortex-app/user/{self}/…`
    /// and any channel outside `vortex-app/user/…`, but no channel that is, or could match, another user's channel:
    /// `vortex-app/*`, `vortex-app/user/*` and `vortex-app/user/{other}/…` are refused.
    static func allows(_ identity: CallerIdentity, channel: String) -> Bool {
        guard let user = identity.userID else { return true }
        let segments = channel.split(separator: "/", omittingEmptySubsequences: false)
        guard segments.count >= 2, segments[0] == userNamespace else { return true }
        if segments[1] == "*" { return false }
        guard segments[1] == "user", segments.count >= 3 else { return true }
        return segments[2] == user
    }

    /// The error for a channel outside the configured namespaces, or `nil` when its namespace exists.
    static func namespaceError(_ channel: String, namespaces: Set<String>) -> AppSyncErrorEntry? {
        let namespace = channel.split(separator: "/", maxSplits: 1).first.map(String.init) ?? channel
        return namespaces.contains(namespace) ? nil : .badRequest("Namespace \(namespace) does not exist")
    }

    /// Whether a subscription `pattern` (exact, or ending in `/*`) matches the published `channel`. A wildcard
    /// matches every deeper channel: `ns/a/*` matches `ns/a/b` and `ns/a/b/c`, but not `ns/a` itself.
    static func matches(pattern: String, channel: String) -> Bool {
        guard pattern.hasSuffix("/*") else { return pattern == channel }
        let prefix = pattern.dropLast()  // keeps the trailing "/"
        return channel.count > prefix.count && channel.hasPrefix(prefix)
    }
}
