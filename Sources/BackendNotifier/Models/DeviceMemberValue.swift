/// One member of a device payload, as ``DevicePayloadFields`` reads it from either reader: ``FlatJSONDecoder/Value``
/// over the payload's bytes, or ``DecodingContainerMember`` over a `Decoder`'s container.
protocol DeviceMemberValue {
    /// The value as `type`; `nil` for `null`. A value of another type throws.
    func optional<T: Decodable>(_ type: T.Type) throws -> T?
    /// ``optional(_:)`` of a `String`, for `eventType` (the flat reader gives a kind's own spelling as the kind's
    /// constant, without allocating).
    func optionalEventType() throws -> String?
}

/// A member of a `Decoder`'s keyed container: present, possibly `null`.
struct DecodingContainerMember: DeviceMemberValue {
    let container: KeyedDecodingContainer<DeviceKey>
    let key: DeviceKey

    func optional<T: Decodable>(_ type: T.Type) throws -> T? { try container.decodeIfPresent(type, forKey: key) }
    func optionalEventType() throws -> String? { try optional(String.self) }
}
