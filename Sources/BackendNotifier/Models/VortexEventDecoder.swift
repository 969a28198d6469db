import Foundation
import SubscriberCore

/// Decodes event payloads tolerantly: unknown fields are ignored (and listed by ``unknownFields(in:for:)`` so
/// callers can log them at debug level), absent or `null` optional fields decode as `nil`, and unknown enum
/// values decode as `.unknown`. Only malformed JSON, a wrong type or a missing required field fails, with a
/// ``VortexDecodingError`` that names the field.
///
/// What is required depends on the protocol the payload came by. The nine-kind payloads of AppSync Events (the new
/// schema, ``decode(_:from:)`` and ``decode(routingByEventTypeIn:)``) require `eventType` and `timestamp` on every
/// event, and `userId` and `revokedAt` on a token revocation. Legacy GraphQL payloads (``decodeLegacy(_:from:)``)
/// require only what the legacy schema makes non-null (`userId`, `revokedAt`): `eventType` and `timestamp` are not
/// part of it.
public struct VortexEventDecoder: Sendable {
    /// One decoder for every event (decoding does not mutate it), instead of one allocated per event.
    private let decoder = JSONDecoder()
    /// Creates a decoder.
    public init() {}

    /// Decodes `json` as the payload of `kind` (the kind of the channel it arrived on), as the new schema has it:
    /// a payload without `eventType` or `timestamp` fails with ``VortexDecodingError/missingField(model:field:)``.
    ///
    /// The payload's `eventType` is not checked against `kind`; see ``decode(routingByEventTypeIn:)`` for
    /// wildcard subscriptions.
    public func decode(_ kind: VortexEventKind, from json: Data) -> Result<VortexEvent, VortexDecodingError> {
        decodeModel(kind, from: json, requiringMetadata: true)
    }

    /// Decodes `json` as the model of `kind`; `requiringMetadata`: the new schema's `eventType` and `timestamp` are
    /// required too (legacy GraphQL payloads may lack them).
    func decodeModel(
        _ kind: VortexEventKind, from json: Data, requiringMetadata required: Bool = false
    ) -> Result<VortexEvent, VortexDecodingError> {
        func model<T: DevicePayloadFields & VortexEventPayload>(_ wrap: (T) -> VortexEvent) -> Result<VortexEvent, VortexDecodingError> {
            Self.checked(decodeLegacy(T.self, from: json), required, wrap)
        }
        func model<T: VortexEventPayload>(_ wrap: (T) -> VortexEvent) -> Result<VortexEvent, VortexDecodingError> {
            Self.checked(decodeLegacy(T.self, from: json), required, wrap)
        }
        return switch kind {
        case .devicePresence: model(VortexEvent.devicePresence)
        case .deviceRecording: model(VortexEvent.deviceRecording)
        case .deviceFirmware: model(VortexEvent.deviceFirmware)
        case .archiveState: model(VortexEvent.archiveState)
        case .licensePhase: model(VortexEvent.licensePhase)
        case .plan: model(VortexEvent.plan)
        case .aiSettings: model(VortexEvent.aiSettings)
        case .roleChanged: model(VortexEvent.roleChanged)
        case .tokenRevoked: model(VortexEvent.tokenRevoked)
        }
    }

    /// Decodes `json` as the kind its `eventType` names (``VortexEventKind/init(eventType:)``): for payloads
    /// from a wildcard subscription such as `vortex-app/user/{userId}/device/*`. Requires what ``decode(_:from:)``
    /// requires.
    ///
    /// Fails with ``VortexDecodingError/unknownEventType(_:)`` when `eventType` is absent or names no kind.
    public func decode(routingByEventTypeIn json: Data) -> Result<VortexEvent, VortexDecodingError> {
        struct Routing: Decodable { var eventType: String? }
        switch decodeLegacy(Routing.self, from: json) {
        case .failure(let error):
            return .failure(error)
        case .success(let routing):
            guard let eventType = routing.eventType, let kind = VortexEventKind(eventType: eventType) else {
                return .failure(.unknownEventType(routing.eventType))
            }
            return decode(kind, from: json)
        }
    }

    /// The fields the new schema requires on every event beyond what the models require themselves.
    static let requiredMetadata = ["eventType", "timestamp"]

    /// The decoded model wrapped as its event, or, when `required`, ``VortexDecodingError/missingField(model:field:)``
    /// for the first of `eventType` and `timestamp` it lacks. Checked on the concrete model as it is moved into the
    /// event: reading it back out of the event, or mapping results, copied it (a retain per string) on every event.
    @inline(__always)
    static func checked<P: VortexEventPayload>(
        _ decoded: Result<P, VortexDecodingError>, _ required: Bool, _ wrap: (P) -> VortexEvent
    ) -> Result<VortexEvent, VortexDecodingError> {
        switch decoded {
        case .failure(let error):
            return .failure(error)
        case .success(let model):
            if required {
                if model.eventType == nil { return .failure(.missingField(model: P.modelName, field: "eventType")) }
                if model.timestamp == nil { return .failure(.missingField(model: P.modelName, field: "timestamp")) }
            }
            return .success(wrap(model))
        }
    }

    /// Decodes `json` as `type`: for the merged legacy outputs (``DeviceStateOutput``,
    /// ``OrganizationStateOutput``) and any other payload model, with the same error translation. Requires what the
    /// model requires and nothing more, as legacy GraphQL payloads need (no `eventType` or `timestamp`).
    public func decodeLegacy<T: Decodable>(_ type: T.Type, from json: Data) -> Result<T, VortexDecodingError> {
        if let value = FlatJSONDecoder.decode(type, from: json) { return .success(value) }
        return decodeWithJSONDecoder(type, from: json)
    }

    /// ``decodeLegacy(_:from:)`` for the device models, which the fast path fills member by member, without a runtime type
    /// check.
    func decodeLegacy<T: DevicePayloadFields>(_ type: T.Type, from json: Data) -> Result<T, VortexDecodingError> {
        let fast = json.withUnsafeBytes { raw in FlatJSONDecoder.object(raw.bindMemory(to: UInt8.self)).flatMap { try? T(flat: $0) } }
        if let fast { return .success(fast) }
        return decodeWithJSONDecoder(type, from: json)
    }

    /// Decodes a payload of the notifier's upstreams, scanning it once where the fast path applies: its kind (`kind`, or
    /// the one its `eventType` names) and its model. `requiringMetadata`: the new schema's `eventType` and `timestamp`
    /// are required too (AppSync Events; legacy GraphQL payloads may lack them). The kind is `nil` when `kind` is `nil`
    /// and `eventType` names no kind; the result is then ``VortexDecodingError/unknownEventType(_:)``.
    func decodeEvent(
        _ json: Data, kind fixed: VortexEventKind?, requiringMetadata: Bool
    ) -> (kind: VortexEventKind?, result: Result<VortexEvent, VortexDecodingError>) {
        enum Fast {
            case notApplicable
            case unknownKind(String?)
            case decoded(VortexEventKind, Result<VortexEvent, VortexDecodingError>?)
        }
        let fast = json.withUnsafeBytes { raw -> Fast in
            guard let object = FlatJSONDecoder.object(raw.bindMemory(to: UInt8.self)) else { return .notApplicable }
            if let fixed { return .decoded(fixed, Self.event(fixed, from: object, requiringMetadata: requiringMetadata)) }
            // The kind from the bytes: a string is made only for a spelling that is not a kind's own.
            let spelled = object.eventType
            if let kind = spelled?.plainStringBytes.flatMap(VortexEventKind.init(eventTypeBytes:)) {
                return .decoded(kind, Self.event(kind, from: object, requiringMetadata: requiringMetadata))
            }
            let eventType = try? spelled?.string()
            guard let kind = eventType.flatMap(VortexEventKind.init(eventType:)) else { return .unknownKind(eventType) }
            return .decoded(kind, Self.event(kind, from: object, requiringMetadata: requiringMetadata))
        }
        switch fast {
        case .unknownKind(let eventType):
            return (nil, .failure(.unknownEventType(eventType)))
        case .decoded(let kind, let result?):
            return (kind, result)
        // JSONDecoder decides, and names what is wrong.
        case .decoded(let kind, nil):
            return (kind, decodeModel(kind, from: json, requiringMetadata: requiringMetadata))
        case .notApplicable:
            let eventType = fixed == nil ? Self.eventType(in: json) : nil
            guard let kind = fixed ?? eventType.flatMap(VortexEventKind.init(eventType:)) else {
                return (nil, .failure(.unknownEventType(eventType)))
            }
            return (kind, decodeModel(kind, from: json, requiringMetadata: requiringMetadata))
        }
    }

    /// A device event as the merged API delivers it, read straight into ``DeviceStateOutput``: what `decodeEvent` of the
    /// device channel and `DeviceStateOutput(_:)` of its model give together, for when no nine-method stream wants the
    /// model itself. `nil` unless the fast path applies, the payload's `eventType` is a device kind's own spelling and
    /// the event is valid (with `requiringMetadata`, it has `eventType` and `timestamp`): the caller then takes
    /// `decodeEvent`, which decides and reports.
    func mergedDeviceEvent(_ json: Data, requiringMetadata required: Bool) -> (kind: VortexEventKind, value: DeviceStateOutput)? {
        json.withUnsafeBytes { raw in
            guard let object = FlatJSONDecoder.object(raw.bindMemory(to: UInt8.self)),
                let spelled = object.eventType,
                let kind = spelled.plainStringBytes.flatMap(VortexEventKind.init(eventTypeBytes:)),
                kind == .devicePresence || kind == .deviceRecording || kind == .deviceFirmware,
                let value = try? DeviceStateOutput(flat: object, only: kind),
                !required || (value.eventType != nil && value.timestamp != nil)
            else { return nil }
            return (kind, value)
        }
    }

    /// The fast path's model of `kind` (checked as ``checked(_:_:_:)`` says); `nil` when the fast path does not apply.
    private static func event(
        _ kind: VortexEventKind, from object: FlatJSONDecoder.ObjectView, requiringMetadata required: Bool
    ) -> Result<VortexEvent, VortexDecodingError>? {
        func flat<T: DevicePayloadFields & VortexEventPayload>(_ wrap: (T) -> VortexEvent) -> Result<VortexEvent, VortexDecodingError>? {
            guard let model = try? T(flat: object) else { return nil }
            return checked(.success(model), required, wrap)
        }
        return switch kind {
        case .devicePresence: flat(VortexEvent.devicePresence)
        case .deviceRecording: flat(VortexEvent.deviceRecording)
        case .deviceFirmware: flat(VortexEvent.deviceFirmware)
        // Rare events: JSONDecoder's (see FlatJSONDecoder).
        case .archiveState, .licensePhase, .plan, .aiSettings, .roleChanged, .tokenRevoked: nil
        }
    }

    /// The `eventType` string, read with the envelope scanner (no full decode), for payloads the fast path leaves to
    /// `JSONDecoder`.
    static func eventType(in json: Data) -> String? {
        json.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            guard let envelope = try? JSONEnvelope(scanning: bytes) else { return nil }
            return envelope.string("eventType", in: bytes)
        }
    }

    /// The name errors give `type`: the model's own (``VortexEventPayload/modelName``) or the type's.
    private static func modelName<T>(_ type: T.Type) -> String {
        (type as? any VortexEventPayload.Type)?.modelName ?? String(describing: type)
    }

    private func decodeWithJSONDecoder<T: Decodable>(_ type: T.Type, from json: Data) -> Result<T, VortexDecodingError> {
        let model = Self.modelName(type)
        do {
            return .success(try decoder.decode(type, from: json))
        } catch let error as DecodingError {
            let translated = VortexDecodingError(error, model: model)
            if case .malformedJSON = translated, let field = unrepresentableField(type, in: json) {
                return .failure(field)
            }
            return .failure(translated)
        } catch {
            return .failure(.malformedJSON(model: model, detail: String(describing: error)))
        }
    }

    /// Finds the field behind a "not valid JSON" error on JSON that is valid: swift-corelibs-foundation reports a
    /// number an integer cannot hold (such as `2.5`) that way, without a coding path. The field is the one
    /// whose removal lets the payload decode.
    private func unrepresentableField<T: Decodable>(_ type: T.Type, in json: Data) -> VortexDecodingError? {
        guard case .object(let members)? = try? JSONDecoder().decode(JSONValue.self, from: json) else { return nil }
        for key in members.keys.sorted() {
            var remaining = members
            remaining[key] = nil
            guard let data = try? JSONEncoder().encode(JSONValue.object(remaining)),
                (try? JSONDecoder().decode(type, from: data)) != nil
            else { continue }
            let value = members[key].flatMap { try? JSONEncoder().encode($0) }.map { String(decoding: $0, as: UTF8.self) }
            return .invalidValue(
                model: Self.modelName(type), field: key,
                detail: "\(value ?? "the value") cannot be represented, such as a fraction for an integer")
        }
        return nil
    }

    /// The top-level keys of the JSON object `json` that the payload model of `kind` does not know, sorted;
    /// `[]` when there are none or `json` is not a JSON object.
    public func unknownFields(in json: Data, for kind: VortexEventKind) -> [String] {
        unknownFields(in: json, known: kind.payloadType.knownFields)
    }

    /// The top-level keys of the JSON object `json` that `type` does not know, sorted; `[]` when there are none
    /// or `json` is not a JSON object.
    public func unknownFields<T: VortexEventPayload>(in json: Data, as type: T.Type) -> [String] {
        unknownFields(in: json, known: T.knownFields)
    }

    private func unknownFields(in json: Data, known: Set<String>) -> [String] {
        guard case .object(let members)? = try? JSONDecoder().decode(JSONValue.self, from: json) else { return [] }
        return members.keys.filter { !known.contains($0) }.sorted()
    }
}
