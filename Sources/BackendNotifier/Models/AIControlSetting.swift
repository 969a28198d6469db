/// An organization's AI control setting (`aiControlSetting` on `organization/aiSettingsChanged`,
/// `AIControlSetting` on the legacy ``OrganizationStateOutput``).
public struct AIControlSetting: Sendable, Codable, Equatable {
    /// The setting's identifier.
    public var uuid: String?
    /// Whether the organization agreed to the AI terms.
    public var termsAgreement: Bool?
    /// The options, as sent: the documents do not define their shape.
    public var options: JSONValue?

    /// Creates a setting.
    public init(uuid: String? = nil, termsAgreement: Bool? = nil, options: JSONValue? = nil) {
        self.uuid = uuid
        self.termsAgreement = termsAgreement
        self.options = options
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case uuid, termsAgreement, options
    }

    /// Every JSON key this type decodes.
    public static let knownFields: Set<String> = Set(CodingKeys.allCases.map(\.rawValue))
}
