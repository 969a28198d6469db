/// A key and environment variable of an earlier version, declared in ``RealtimeSettingsTable/replaced``: using either
/// is an error that names the replacement, so a renamed setting is not a mystery.
package struct ReplacedRealtimeSetting: Sendable, Equatable {
    /// The former key (JSON path).
    package let key: String
    /// The former environment variable.
    package let environmentVariable: String
    /// The key that replaced it (a key of ``RealtimeSettingsTable/settings``).
    package let replacement: String
    /// Why, or for what, in a few words ("for both transports").
    package let note: String

    /// The replacement's environment variable (from the table).
    package var replacementVariable: String {
        RealtimeSettingsTable.setting(forKey: replacement)?.environmentVariable ?? replacement
    }
}
