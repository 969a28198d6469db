import Foundation
import Logging
import SubscriberCore

/// The AppSync Events half of one link: parses each frame once and routes it through ``AppSyncState``. `data` frames
/// are the hot path: only `type`, `id` and `event` are read, and the event string is sliced (or unescaped once) straight
/// into the payload, then yielded to the consumer's stream from the reading task.
struct AppSyncLinkDriver: LinkDriver {
    let id: Int
    let state: AppSyncState
    let defaultKeepAliveTimeout: Duration
    let logger: Logger

    func handshakeMessages() -> [WebSocketMessage] { [.text(AppSyncOutboundMessage.connectionInit)] }

    func handleHandshakeFrame(_ message: WebSocketMessage) -> LinkHandshakeStep {
        message.withBytes { bytes in
            guard let envelope = try? JSONEnvelope(scanning: bytes), let type = envelope.string("type", in: bytes) else {
                logger.warning("ignored a malformed frame during the handshake")
                return .pending
            }
            switch type {
            case "connection_ack":
                // The fallback where the service ignores WebSocket pings: its `ka` (marked per frame below).
                return .acknowledged(.serverKeepAlive(keepAliveTimeout(envelope, bytes)))
            case "connection_error":
                return .fail(connectionErrorEnd(Data(bytes), type: type), closeCode: 1000, reason: "connection_error")
            default:
                return .pending
            }
        }
    }

    func linkOpened(_ control: LinkControl) { state.linkOpened(id, control: control) }

    func handleFrame(_ message: WebSocketMessage, into batch: DeliveryBatch) -> LinkFrameStep {
        message.withBytes { handle($0, batch) }
    }

    func pendingMessages() async -> [WebSocketMessage] { await state.pendingMessages(on: id) }

    func pingMessage() -> WebSocketMessage? { nil }

    func timerFired(_ token: Int) { state.timerFired(token, on: id) }

    func rotationDue() { state.rotationDue(from: id) }

    // MARK: Frames

    private func handle(_ bytes: UnsafeBufferPointer<UInt8>, _ batch: DeliveryBatch) -> LinkFrameStep {
        if let step = handleData(bytes, batch) { return step }
        let envelope: JSONEnvelope
        do {
            envelope = try JSONEnvelope(scanning: bytes)
        } catch {
            logger.warning("ignored a malformed frame", metadata: ["error": "\(error)"])
            return .handled
        }
        guard let type = envelope.string("type", in: bytes) else {
            logger.warning("ignored a frame without type")
            return .handled
        }
        let messageID = envelope.string("id", in: bytes)
        switch type {
        case "data":
            guard let messageID else {
                logger.warning("ignored a data frame without id")
                return .handled
            }
            guard let event = envelope.member("event", in: bytes), let payloads = payloads(of: event, in: bytes) else {
                logger.warning("an event could not be read", metadata: ["id": "\(messageID)"])
                state.undecodable(id: messageID, on: id)
                return .handled
            }
            for payload in payloads {
                state.routeData(payload, id: messageID, on: id)?.yield(.payload(payload), into: batch)
            }
            return .handled
        case "ka":
            return .keepAlive
        case "connection_ack":
            return .handled
        default:
            return handleControl(type, messageID: messageID, frame: Data(bytes))
        }
    }

    /// The hot path: a `data` frame whose `id` has no escapes and whose `event` is a string (as the service sends
    /// them), routed from one scan that stores nothing. `nil` for every other frame, which the general path handles
    /// (and reports, if it is malformed).
    private func handleData(_ bytes: UnsafeBufferPointer<UInt8>, _ batch: DeliveryBatch) -> LinkFrameStep? {
        var type: JSONEnvelope.Member?
        var messageID: JSONEnvelope.Member?
        var event: JSONEnvelope.Member?
        do {
            // As `JSONEnvelope.member(_:in:)`: the first member of a name counts.
            try JSONEnvelope.scan(bytes, descendingInto: []) { _, member in
                if type == nil, member.hasKey("type", in: bytes) {
                    type = member
                } else if messageID == nil, member.hasKey("id", in: bytes) {
                    messageID = member
                } else if event == nil, member.hasKey("event", in: bytes) {
                    event = member
                }
            }
        } catch {
            return nil
        }
        guard let type, type.kind == .string, !type.valueHasEscapes,
            Self.dataType.withUTF8Buffer({ JSONEnvelope.bytes(type.value, in: bytes, equal: $0) }),
            let messageID, messageID.kind == .string, !messageID.valueHasEscapes, let event, event.kind == .string
        else { return nil }
        let payload: RealtimePayload
        if event.valueHasEscapes {
            guard let json = try? JSONEnvelope.unescape(bytes, event.value) else { return nil }
            payload = RealtimePayload(json: json)
        } else {
            payload = RealtimePayload(json: Data(UnsafeBufferPointer(rebasing: bytes[event.value])))
        }
        state.routeData(payload, idBytes: UnsafeBufferPointer(rebasing: bytes[messageID.value]), on: id)?.yield(
            .payload(payload), into: batch)
        return .handled
    }

    private static let dataType: StaticString = "data"

    /// The `event` value: a JSON-encoded string (the protocol), or, tolerated, an array of them or a bare object.
    /// `nil` when it cannot be read.
    private func payloads(of event: JSONEnvelope.Member, in bytes: UnsafeBufferPointer<UInt8>) -> [RealtimePayload]? {
        switch event.kind {
        case .string:
            if !event.valueHasEscapes { return [RealtimePayload(json: Data(UnsafeBufferPointer(rebasing: bytes[event.value])))] }
            guard let json = try? JSONEnvelope.unescape(bytes, event.value) else { return nil }
            return [RealtimePayload(json: json)]
        case .array:
            let slice = Data(UnsafeBufferPointer(rebasing: bytes[event.value]))
            guard let strings = try? JSONDecoder().decode([String].self, from: slice) else { return nil }
            return strings.map { RealtimePayload(json: Data($0.utf8)) }
        case .object:
            return [RealtimePayload(json: Data(UnsafeBufferPointer(rebasing: bytes[event.value])))]
        case .number, .literal:
            return nil
        }
    }

    private func keepAliveTimeout(_ envelope: JSONEnvelope, _ bytes: UnsafeBufferPointer<UInt8>) -> Duration {
        // The service puts connectionTimeoutMs at the top level; accept it under payload too. Absurd values (zero,
        // negative, non-numeric, beyond a day) fall back to the default rather than disarming the watchdog.
        func milliseconds(_ data: Data?) -> Int? {
            guard let data, let value = Int(String(decoding: data, as: UTF8.self)), value > 0, value <= 86_400_000 else { return nil }
            return value
        }
        if let value = milliseconds(try? envelope.valueBytes("connectionTimeoutMs", in: bytes)) {
            return .milliseconds(value)
        }
        if let payload = envelope.member("payload", in: bytes), payload.kind == .object {
            let slice = UnsafeBufferPointer(rebasing: bytes[payload.value])
            if let inner = try? JSONEnvelope(scanning: slice),
                let value = milliseconds(try? inner.valueBytes("connectionTimeoutMs", in: slice))
            {
                return .milliseconds(value)
            }
        }
        return defaultKeepAliveTimeout
    }

    /// How a `connection_error` ends the link, before the acknowledgement or after it: refused credentials, or the
    /// server's error.
    private func connectionErrorEnd(_ frame: Data, type: String) -> LinkEnd {
        let error = AppSyncServerError.first(of: AppSyncServerError.decodeErrors(from: frame), type: type)
        logger.warning("connection_error", metadata: ["errorType": "\(error.errorType)"])
        return error.isAuthFailure
            ? .authRejected("\(error.errorType): \(error.message ?? "")")
            : .serverError(errorType: error.errorType, message: error.message)
    }

    private func handleControl(_ type: String, messageID: String?, frame: Data) -> LinkFrameStep {
        switch type {
        case "subscribe_success":
            if let messageID { state.subscriptionConfirmed(messageID, on: id) }
        case "subscribe_error":
            guard let messageID else { return .handled }
            let error = AppSyncServerError.first(of: AppSyncServerError.decodeErrors(from: frame), type: type)
            state.subscriptionRejected(messageID, error, on: id)
        case "unsubscribe_success", "unsubscribe_error":
            if let messageID { state.unsubscribed(messageID, on: id) }
        case "publish_success":
            guard let messageID else { return .handled }
            let eventCount = state.values.withLock { $0.publishes[messageID]?.events.count } ?? 0
            state.completePublish(
                messageID, Result { () throws(RealtimeError) in try PublishResult(appSyncReply: frame, eventCount: eventCount) })
        case "publish_error":
            guard let messageID else { return .handled }
            let error = AppSyncServerError.first(of: AppSyncServerError.decodeErrors(from: frame), type: type)
            state.publishRejected(messageID, error)
        case "broadcast_error":
            let error = AppSyncServerError.first(of: AppSyncServerError.decodeErrors(from: frame), type: type)
            logger.warning("broadcast_error", metadata: ["errorType": "\(error.errorType)"])
            state.broadcastError(id: messageID, on: id)
        case "connection_error":
            return .close(connectionErrorEnd(frame, type: type), code: 1000, reason: "connection_error")
        case "error":
            let error = AppSyncServerError.first(of: AppSyncServerError.decodeErrors(from: frame), type: type)
            if let messageID, state.isPublish(messageID) {
                state.publishRejected(messageID, error)
            } else if let messageID, state.isPendingSubscription(messageID, on: id) {
                state.subscriptionRejected(messageID, error, on: id)
            } else {
                logger.warning("server error", metadata: ["errorType": "\(error.errorType)", "message": "\(error.message ?? "")"])
            }
        default:
            logger.debug("ignored an unknown message type", metadata: ["type": "\(type)"])
        }
        return .handled
    }
}
