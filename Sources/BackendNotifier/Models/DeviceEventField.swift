/// The one field that tells the three device events apart: `online` (presence), `recording` (recording) or
/// `fwUpdateState` (firmware). A caseless marker type that ``DeviceEventOutput`` is generic over; the package defines
/// the three (``DevicePresenceField``, ``DeviceRecordingField``, ``DeviceFirmwareField``).
public protocol DeviceEventField: Sendable {
    /// The field's value type (`Bool` or `Int`).
    associatedtype Value: Codable & Sendable & Equatable
    /// The field's JSON key, which is also the name of its Swift property: `online`, `recording` or `fwUpdateState`
    /// (``DeviceEventFieldKey`` has no other values, since a model decodes no other).
    static var key: DeviceEventFieldKey { get }
    /// The name of the model, as the documents and decoding errors spell it (such as `DevicePresenceOutput`).
    static var modelName: String { get }
}
