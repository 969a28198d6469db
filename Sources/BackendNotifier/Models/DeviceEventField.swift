/// The one field that tells the three device events apart: `online` (presence), `recording` (recording) or
/// `fwUpdateState` (firmware). A caseless marker type that ``DeviceEventOutput`` is generic over; the package defines
/// the three (``DevicePresenceField``, ``DeviceRecordingField``, ``DeviceFirmwareField``).
public protocol DeviceEventField: Sendable {
    /// The field's value type (`Bool` or `Int`).
    associatedtype Value: Codable & Sendable & Equatable
    /// The field's JSON key, which is also the name of its Swift property.
    static var key: String { get }
    /// The name of the model, as the documents and decoding errors spell it (such as `DevicePresenceOutput`).
    static var modelName: String { get }
}

/// A device event field the flat reader can fill (``FlatJSONDecoder``): the three the package defines. Kept apart from
/// ``DeviceEventField`` because the reader's types are internal.
protocol FlatDeviceEventField: DeviceEventField {
    /// The field's key in the shared vocabulary; ``DeviceEventField/key`` is its raw value.
    static var deviceKey: DeviceKey { get }
    /// Reads the field's value (`nil` for `null`); a value of another type is ``FlatJSONDecoder/Unsupported``.
    static func read(_ value: FlatJSONDecoder.Value) throws -> Value?
}
