/// A key and environment variable of an earlier version, declared in ``RealtimeSettingsTable/replaced``: using either
/// is an error that names the replacement, so a renamed setting is not a mystery.
public struct ReplacedRealtimeSetting: Sendable, Equatable {
    /// The former key (JSON path).
    public let key: String
    /// The former environment variable.
    public let environmentVariable: String
    /// The key that replaced it (a key of ``RealtimeSettingsTable/settings``).
    public let replacement: String
    /// Why, or for what, in a few words ("for both transports").
    public let note: String

    /// Declares a replaced setting.
    public init(key: String, environmentVariable: String, replacement: String, note: String) {
        self.key = key
        self.environmentVariable = environmentVariable
        self.replacement = replacement
        self.note = note
    }

    /// The replacement's environment variable (from the table).
    public var replacementVariable: String {
        RealtimeSettingsTable.setting(forKey: replacement)?.environmentVariable ?? replacement
    }
}
