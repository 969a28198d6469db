/// A string enum whose unknown wire values survive as `.unknown(String)` instead of failing the whole event, so the
/// backend can add a value without breaking older apps. Conformers supply the cases; this supplies the coding.
public protocol TolerantStringEnum: Sendable, Hashable, RawRepresentable, Codable, CustomStringConvertible where RawValue == String {
    /// Maps a wire value to its case, or to `.unknown(value)`.
    init(rawValue: String)
    /// The documented values.
    static var knownCases: [Self] { get }
}

extension TolerantStringEnum {
    /// Whether this is one of the documented values.
    public var isKnown: Bool { Self.knownCases.contains(self) }

    /// Decodes from a JSON string; a non-string is a type mismatch.
    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(String.self))
    }

    /// Encodes the wire value.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    /// The wire value.
    public var description: String { rawValue }
}
