import Foundation
import Logging
import SubscriberCore

/// Decodes each upstream payload once and fans it out to the public streams of both APIs.
///
/// Runs on the upstream tasks themselves (no hop onto the notifier actor per event). Values are normalised so both
/// transports give identical values: the nine-method API carries the device group in `siteId` (legacy
/// `deviceGroupID` folded into it), the merged API carries it in both `deviceGroupID` and `siteId`.
struct EventRouter: Sendable {
    let hubs: NotifierHubs
    let filter: any DeviceEventFilter
    let metrics: NotifierMetrics
    let logger: Logger
    let wallClock: WallClock
    /// Where the losses the router notices go (undecodable events, GraphQL results without data).
    let losses: LossReporter
    private let decoder = VortexEventDecoder()
    private let failures = Locked(0)

    /// Payloads that could not be decoded (dropped, logged, counted).
    var decodeFailures: Int { failures.withLock { $0 } }

    /// Decodes `payload` once and delivers it to every public stream it feeds; the observers are woken with `batch` (when
    /// the caller flushes it) or at once without one.
    func route(_ payload: RealtimePayload, from upstream: Upstream, dialect: TransportDialect, into batch: DeliveryBatch?) {
        switch dialect {
        case .appSyncChannels: routeChannelEvent(payload.json, from: upstream, dialect: .appSyncChannels, batch)
        case .graphQL: routeLegacyEvent(payload, from: upstream, batch)
        }
    }

    // MARK: AppSync Events: one event per payload, split already

    /// The kind every event of `upstream` has, `nil` for the wildcard channels (routed by `eventType`).
    private static func fixedKind(of upstream: Upstream) -> VortexEventKind? {
        switch upstream {
        case .device, .organization: nil
        case .archive: .archiveState
        case .role: .roleChanged
        case .revoke: .tokenRevoked
        }
    }

    /// `dialect`: AppSync Events payloads must carry the new schema's `eventType` and `timestamp`; the legacy GraphQL
    /// ones routed here (archive, role, revocation) need not (docs/migration-guide.md).
    private func routeChannelEvent(_ json: Data, from upstream: Upstream, dialect: TransportDialect, _ batch: DeliveryBatch?) {
        // Only the merged API observes device events (the legacy API's app): the merged value is read directly, not
        // through the kind's model.
        if upstream == .device, !hubs.hasNineMethodObservers(of: .device),
            let (kind, merged) = decoder.mergedDeviceEvent(json, requiringMetadata: dialect == .appSyncChannels)
        {
            logUnknownFields(json, kind)
            if let group = merged.deviceGroup, !filter.canAccessDevice(deviceGroupID: group) { return }
            return deliverMerged(merged, batch)
        }
        let (kind, result) = decoder.decodeEvent(json, kind: Self.fixedKind(of: upstream), requiringMetadata: dialect == .appSyncChannels)
        // Consumed, not bound from a value still alive: each binding of a copy retains and releases every string.
        switch consume result {
        case .failure(let error):
            failed(kind?.rawValue ?? upstream.rawValue, error, json, upstream: upstream, kind: kind, dialect: dialect)
        case .success(let event):
            logUnknownFields(json, event.kind)
            guard passesFilter(event) else { return }
            deliverNine(event, batch)
            switch event {
            case .devicePresence(let value): deliverMerged(DeviceStateOutput(value), batch)
            case .deviceRecording(let value): deliverMerged(DeviceStateOutput(value), batch)
            case .deviceFirmware(let value): deliverMerged(DeviceStateOutput(value), batch)
            case .licensePhase(let value): deliver(OrganizationStateOutput(value), to: hubs.organizationMerged, event.date, batch)
            case .plan(let value): deliver(OrganizationStateOutput(value), to: hubs.organizationMerged, event.date, batch)
            case .aiSettings(let value): deliver(OrganizationStateOutput(value), to: hubs.organizationMerged, event.date, batch)
            default: break
            }
        }
    }

    // MARK: GraphQL: merged outputs, split for the nine-method API

    private func routeLegacyEvent(_ payload: RealtimePayload, from upstream: Upstream, _ batch: DeliveryBatch?) {
        let json = payload.json
        if json.count == 4, String(decoding: json, as: UTF8.self) == "null" {
            logger.warning(
                "GraphQL event without data",
                metadata: [
                    "stream": "\(upstream.rawValue)",
                    "errors": "\(payload.graphQLErrorsJSON.map { String(decoding: $0, as: UTF8.self) } ?? "")",
                ])
            losses.report(.serverError, stream: upstream.rawValue)
            return
        }
        switch upstream {
        case .device:
            switch decoder.decodeLegacy(DeviceStateOutput.self, from: json) {
            case .failure(let error): failed("device", error, json, upstream: upstream, dialect: .graphQL)
            case .success(let merged):
                // Seed 000: unauthorized events are discarded silently.
                if let group = merged.deviceGroup, !filter.canAccessDevice(deviceGroupID: group) { return }
                deliverMerged(merged, batch)
                // The nine-method values only for streams someone observes (a loop, not a closure capturing the router).
                if hubs.hasNineMethodObservers(of: .device) {
                    for event in merged.split() { deliverNine(event, batch) }
                }
            }
        case .organization:
            switch decoder.decodeLegacy(OrganizationStateOutput.self, from: json) {
            case .failure(let error): failed("organization", error, json, upstream: upstream, dialect: .graphQL)
            case .success(let merged):
                deliver(merged, to: hubs.organizationMerged, ISO8601Timestamp.date(from: merged.timestamp), batch)
                if hubs.hasNineMethodObservers(of: .organization) {
                    for event in merged.split() { deliverNine(event, batch) }
                }
            }
        case .archive, .role, .revoke: routeChannelEvent(json, from: upstream, dialect: .graphQL, batch)
        }
    }

    // MARK: Identity (only during a switch's overlap)

    /// The nine-kind events `payload` carries, normalised as the nine-method streams deliver them: what
    /// ``EventIdentity`` is built from during a switch's overlap (never called outside one). Empty when the payload
    /// cannot be decoded.
    func normalisedEvents(of payload: RealtimePayload, from upstream: Upstream, dialect: TransportDialect) -> [VortexEvent] {
        let json = payload.json
        let events: [VortexEvent]
        switch (dialect, upstream) {
        case (.graphQL, .device): events = (try? decoder.decodeLegacy(DeviceStateOutput.self, from: json).get())?.split() ?? []
        case (.graphQL, .organization): events = (try? decoder.decodeLegacy(OrganizationStateOutput.self, from: json).get())?.split() ?? []
        default:
            let decoded = decoder.decodeEvent(json, kind: Self.fixedKind(of: upstream), requiringMetadata: dialect == .appSyncChannels)
            guard case .success(let event) = decoded.result else { return [] }
            events = [event]
        }
        return events.map(Self.normalised)
    }

    /// `event` as the nine-method streams deliver it.
    static func normalised(_ event: VortexEvent) -> VortexEvent {
        switch event {
        case .devicePresence(let value): return .devicePresence(siteOnly(value))
        case .deviceRecording(let value): return .deviceRecording(siteOnly(value))
        case .deviceFirmware(let value): return .deviceFirmware(siteOnly(value))
        case .archiveState(var value):
            value.siteId = value.deviceGroup
            value.deviceGroupID = value.deviceGroup
            return .archiveState(value)
        case .licensePhase, .plan, .aiSettings, .roleChanged, .tokenRevoked: return event
        }
    }

    // MARK: Delivery

    private func passesFilter(_ event: VortexEvent) -> Bool {
        let group: String? =
            switch event {
            case .devicePresence(let value): value.deviceGroup
            case .deviceRecording(let value): value.deviceGroup
            case .deviceFirmware(let value): value.deviceGroup
            case .archiveState(let value): value.deviceGroup
            case .licensePhase, .plan, .aiSettings, .roleChanged, .tokenRevoked: nil
            }
        guard let group else { return true }
        // Seed 000: unauthorized events are discarded silently.
        return filter.canAccessDevice(deviceGroupID: group)
    }

    /// Values are built (copied, normalised, dated) only for streams that have an observer.
    private func deliverNine(_ event: VortexEvent, _ batch: DeliveryBatch?) {
        switch event {
        case .devicePresence(let value): deliver(Self.siteOnly(value), to: hubs.presence, event.date, batch)
        case .deviceRecording(let value): deliver(Self.siteOnly(value), to: hubs.recording, event.date, batch)
        case .deviceFirmware(let value): deliver(Self.siteOnly(value), to: hubs.firmware, event.date, batch)
        case .archiveState(var value):
            // Archives are shared by both APIs: keep both names of the device group.
            deliver(
                {
                    value.siteId = value.deviceGroup
                    value.deviceGroupID = value.deviceGroup
                    return value
                }(), to: hubs.archive, event.date, batch)
        case .licensePhase(let value): deliver(value, to: hubs.license, event.date, batch)
        case .plan(let value): deliver(value, to: hubs.plan, event.date, batch)
        case .aiSettings(let value): deliver(value, to: hubs.aiSettings, event.date, batch)
        case .roleChanged(let value): deliver(value, to: hubs.role, event.date, batch)
        case .tokenRevoked(let value): deliver(value, to: hubs.revoke, event.date, batch)
        }
    }

    /// The nine-method API carries the device group in `siteId` only.
    private static func siteOnly<T: DevicePayloadFields>(_ value: T) -> T {
        var value = value
        value.siteId = value.siteId ?? value.deviceGroupID
        value.deviceGroupID = nil
        return value
    }

    private func deliverMerged(_ merged: @autoclosure () -> DeviceStateOutput, _ batch: DeliveryBatch?) {
        var timestamp: String?
        deliver(
            {
                var value = merged()
                value.siteId = value.siteId ?? value.deviceGroupID
                value.deviceGroupID = value.deviceGroupID ?? value.siteId
                timestamp = value.timestamp
                return value
            }(), to: hubs.deviceMerged, ISO8601Timestamp.date(from: timestamp), batch)
    }

    private func deliver<T: Sendable>(
        _ value: @autoclosure () -> T, to hub: StreamHub<T>, _ published: @autoclosure () -> Date?, _ batch: DeliveryBatch?
    ) {
        guard hub.yield(value(), into: batch) > 0 else { return }
        hub.metrics?.recordDelivery(latency: published().map { wallClock.now().timeIntervalSince($0) })
    }

    /// Drops an undecodable event: counted, logged with where it came from and the field at fault, reported as a loss.
    private func failed(
        _ stream: String, _ error: VortexDecodingError, _ json: Data, upstream: Upstream, kind: VortexEventKind? = nil,
        dialect: TransportDialect
    ) {
        failures.withLock { $0 += 1 }
        metrics.decodeFailure(stream: stream)
        var metadata: Logger.Metadata = [
            "stream": "\(stream)", "channel": "\(Self.source(upstream, kind, dialect))", "reason": "\(error)", "bytes": "\(json.count)",
        ]
        if let field = error.field { metadata["field"] = "\(field)" }
        logger.warning("dropped an undecodable event", metadata: metadata)
        losses.report(.undecodable, stream: upstream.rawValue)
    }

    /// Where an event came from, for logs: the AppSync channel (the kind's, else the upstream's) with the user's prefix
    /// as placeholders (the router knows neither), or the default GraphQL subscription field.
    static func source(_ upstream: Upstream, _ kind: VortexEventKind?, _ dialect: TransportDialect) -> String {
        switch dialect {
        case .graphQL:
            return LegacyGraphQLDocuments.field(for: upstream)
        case .appSyncChannels:
            if let kind { return "{namespace}/user/{userId}/\(kind.channelSuffix)" }
            let request = upstream.request(dialect: .appSyncChannels, userId: "{userId}", organizationId: nil, namespace: "{namespace}")
            guard case .channel(let channel)? = request?.topic else { return upstream.rawValue }
            return channel
        }
    }

    private func logUnknownFields(_ json: Data, _ kind: VortexEventKind) {
        guard logger.logLevel <= .debug else { return }
        let unknown = decoder.unknownFields(in: json, for: kind)
        if !unknown.isEmpty {
            logger.debug("event has fields this version does not know", metadata: ["kind": "\(kind.rawValue)", "fields": "\(unknown)"])
        }
    }
}
