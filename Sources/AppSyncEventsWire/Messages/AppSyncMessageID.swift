/// The service's rule for the `id` of `subscribe`, `unsubscribe` and `publish`: `^[a-zA-Z0-9-_+]{1,128}$`.
package enum AppSyncMessageID {
    /// The published pattern, for error messages.
    package static let pattern = "^[a-zA-Z0-9-_+]{1,128}$"
    /// The longest id accepted.
    package static let maxLength = 128

    /// Whether `id` matches ``pattern``.
    package static func isValid(_ id: String) -> Bool {
        let scalars = id.unicodeScalars
        guard (1...maxLength).contains(scalars.count) else { return false }
        return scalars.allSatisfy { scalar in
            switch scalar {
            case "a"..."z", "A"..."Z", "0"..."9", "-", "_", "+": true
            default: false
            }
        }
    }
}
