import Foundation

/// What makes two deliveries the same event, for the de-duplication during a transport switch's overlap (both
/// transports deliver the same domain event; the app must see it once).
///
/// Events carry no id. The identity is built from the normalised nine-kind value, from the fields both protocols
/// carry even with the default legacy documents (which select no `timestamp`, `eventType` or `orgId`):
///
/// | kind | entity | value |
/// |---|---|---|
/// | devicePresence | the device: `mac`, else `thingName` | `online` |
/// | deviceRecording | the device | `recording` |
/// | deviceFirmware | the device | `fwUpdateState` |
/// | archiveState | the device and the archive's `createdAt` | `status`, `videoLength`, `videoSize`, `cloudSize`, `hasH265` |
/// | licensePhase | the user's organization (the subscription is scoped to it) | `licensePhase` |
/// | plan | the user's organization | `isFreePlan` |
/// | aiSettings | the user's organization | `aiControlSetting` (as JSON with sorted keys) |
/// | roleChanged | the signed-in user (the subscription is theirs) | `reason` |
/// | tokenRevoked | `userId` | `revokedAt`, `reason`, `requestId` |
///
/// plus the `timestamp`, compared as an instant, when both deliveries carry one (AppSync always does; GraphQL when its
/// documents select it, as the drill's do). Without it on one side, a repeat of the same value inside the overlap's
/// short tail would be taken for the earlier event: select `timestamp` in custom GraphQL documents to rule that out.
/// Built only during an overlap, never per event otherwise.
struct EventIdentity: Hashable, Sendable {
    /// What must be equal: the kind, the entity, the value.
    struct Key: Hashable, Sendable {
        let kind: VortexEventKind
        let entity: String
        let value: String
    }

    let key: Key
    /// The instant in milliseconds since 1970 (or the text as sent, when it is not ISO 8601); `nil` when absent.
    let timestamp: String?

    /// The identity of `event`, already normalised as the nine-method streams deliver them.
    init(_ event: VortexEvent, encoder: JSONEncoder) {
        let (entity, value) = Self.entityAndValue(of: event, encoder: encoder)
        key = Key(kind: event.kind, entity: entity, value: value)
        timestamp = event.timestamp.map { text in
            event.date.map { String(Int64(($0.timeIntervalSince1970 * 1000).rounded())) } ?? text
        }
    }

    private static func entityAndValue(of event: VortexEvent, encoder: JSONEncoder) -> (String, String) {
        func text<Value>(_ value: Value?) -> String { value.map { "\($0)" } ?? "-" }
        switch event {
        case .devicePresence(let output): return (device(output), text(output.online))
        case .deviceRecording(let output): return (device(output), text(output.recording))
        case .deviceFirmware(let output): return (device(output), text(output.fwUpdateState))
        case .archiveState(let output):
            let fields = [
                text(output.status), text(output.videoLength), text(output.videoSize), text(output.cloudSize), text(output.hasH265),
            ]
            return (device(output) + "@" + (output.createdAt ?? ""), fields.joined(separator: "|"))
        case .licensePhase(let output): return ("", text(output.licensePhase))
        case .plan(let output): return ("", text(output.isFreePlan))
        case .aiSettings(let output):
            let json = output.aiControlSetting.flatMap { try? encoder.encode($0) }
            return ("", json.map { String(decoding: $0, as: UTF8.self) } ?? "-")
        case .roleChanged(let output): return ("", output.reason ?? "-")
        case .tokenRevoked(let output):
            return (output.userId, [output.revokedAt, text(output.reason), output.requestId ?? "-"].joined(separator: "|"))
        }
    }

    /// Whether a delivery recorded with `recorded` as its timestamp can be this one: equal instants, or either
    /// delivery without one.
    func matches(recorded: String?) -> Bool {
        timestamp == nil || recorded == nil || timestamp == recorded
    }

    /// The encoder identities are built with: sorted keys, so equal values give equal bytes.
    static func makeEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }

    private static func device(_ output: some VortexDevicePayload) -> String {
        output.mac ?? output.thingName ?? ""
    }
}
