import Foundation

extension RealtimeConfiguration: CustomStringConvertible, CustomReflectable {
    /// Every setting as `key: value`, in the order of ``RealtimeSettingsTable``, with secrets redacted: ``apiKey`` and
    /// ``graphQLConnectionPayload`` (a template may hold a credential) show as `<redacted>` when set. What `print`,
    /// string interpolation and `String(reflecting:)` show, so a logged configuration never leaks a credential.
    public var description: String {
        "RealtimeConfiguration(" + Self.redactedSettings(self).map { "\($0.key): \($0.value)" }.joined(separator: ", ") + ")"
    }

    /// The same settings as ``description``, secrets redacted, as the children `dump` and `Mirror` show.
    public var customMirror: Mirror {
        Mirror(self, children: Self.redactedSettings(self).map { (label: $0.key, value: $0.value as Any) }, displayStyle: .struct)
    }

    /// Each setting's key and its value as the reference writes it; a hidden value set is `<redacted>`, none is `nil`.
    private static func redactedSettings(_ configuration: RealtimeConfiguration) -> [(key: String, value: String)] {
        RealtimeSettingsTable.settings.map { setting in
            guard let value = setting.render(configuration) else { return (setting.key, "nil") }
            return (setting.key, setting.hidesValue ? "<redacted>" : value)
        }
    }
}
