import Foundation
import SubscriberCore

extension AppSyncEventsTransport {
    /// Handles one inbound event of a link; returns `false` when the link has ended.
    func handleInbound(_ event: WebSocketInboundEvent, on generation: Int) async -> Bool {
        guard let link = links[generation], link.end == nil else { return false }
        switch event {
        case .closed(let info):
            linkEnded(generation, link.requestedEnd ?? .closed(info))
            return false
        case .message(let message):
            link.keepAlive?.recordActivity()
            let action: FrameAction
            switch message {
            case .text(let text): action = text.withContiguousUTF8 { handleFrame($0, on: generation) }
            case .binary(let data): action = data.withUnsafeBytes { handleFrame($0.bindMemory(to: UInt8.self), on: generation) }
            }
            switch action {
            case .none: break
            case .close(let end, let reason): await close(generation, as: end, message: reason)
            case .rotationStep: await rotationProgress()
            case .rotationUnsubscribed: await finishRotationIfUnsubscribed()
            }
            return true
        }
    }

    /// What a frame asks the link to do after it has been handled synchronously.
    enum FrameAction {
        case none
        case close(AppSyncLinkEnd, String)
        case rotationStep
        case rotationUnsubscribed
    }

    /// Parses a frame once and routes it. `data` frames are the hot path: only `type`, `id` and `event` are read, and
    /// the event string is unescaped straight into the payload.
    private func handleFrame(_ bytes: UnsafeBufferPointer<UInt8>, on generation: Int) -> FrameAction {
        let envelope: JSONEnvelope
        do {
            envelope = try JSONEnvelope(scanning: bytes)
        } catch {
            logger.warning("ignored a malformed frame", metadata: ["error": "\(error)"])
            return .none
        }
        guard let type = envelope.string("type", in: bytes) else {
            logger.warning("ignored a frame without type")
            return .none
        }
        let id = envelope.string("id", in: bytes)
        switch type {
        case "data":
            guard let id, let event = envelope.member("event", in: bytes) else {
                logger.warning("ignored a data frame without id or event")
                return .none
            }
            deliver(payloads(of: event, in: bytes), to: id, from: generation)
            return .none
        case "ka":
            return .none
        case "connection_ack":
            acknowledge(generation, timeout: keepAliveTimeout(envelope, bytes))
            return .none
        default:
            return handleControl(type, id: id, frame: Data(bytes), on: generation)
        }
    }

    /// The `event` value: a JSON-encoded string (the protocol), or, tolerated, an array of them or a bare object.
    private func payloads(of event: JSONEnvelope.Member, in bytes: UnsafeBufferPointer<UInt8>) -> [RealtimePayload] {
        switch event.kind {
        case .string:
            if !event.valueHasEscapes { return [RealtimePayload(json: Data(UnsafeBufferPointer(rebasing: bytes[event.value])))] }
            guard let json = try? JSONEnvelope.unescape(bytes, event.value) else {
                logger.warning("ignored an event with a malformed string")
                return []
            }
            return [RealtimePayload(json: json)]
        case .array:
            let slice = Data(UnsafeBufferPointer(rebasing: bytes[event.value]))
            guard let strings = try? JSONDecoder().decode([String].self, from: slice) else { return [RealtimePayload(json: slice)] }
            return strings.map { RealtimePayload(json: Data($0.utf8)) }
        case .object:
            return [RealtimePayload(json: Data(UnsafeBufferPointer(rebasing: bytes[event.value])))]
        case .number, .literal:
            return [RealtimePayload(json: Data(UnsafeBufferPointer(rebasing: bytes[event.value])))]
        }
    }

    private func deliver(_ payloads: [RealtimePayload], to id: String, from generation: Int) {
        guard let record = subscriptions[id] else { return }
        if record.deliveringOn == generation {
            for payload in payloads {
                if record.rotationTarget != nil {
                    subscriptions[id]?.overlapLog.append(payload.json)
                } else if !record.overlapLog.isEmpty, subscriptions[id]?.consumeOverlap(payload.json) == true {
                    continue
                }
                record.sink.yield(.payload(payload))
            }
        } else if record.rotationTarget == generation {
            subscriptions[id]?.rotationBuffer.append(contentsOf: payloads)
        }
    }

    private func keepAliveTimeout(_ envelope: JSONEnvelope, _ bytes: UnsafeBufferPointer<UInt8>) -> Duration {
        // The service puts connectionTimeoutMs at the top level; accept it under payload too.
        func milliseconds(_ data: Data?) -> Int? { data.flatMap { Int(String(decoding: $0, as: UTF8.self)) } }
        if let value = milliseconds(try? envelope.valueBytes("connectionTimeoutMs", in: bytes)), value > 0 {
            return .milliseconds(value)
        }
        if let payload = try? envelope.valueBytes("payload", in: bytes),
            let object = try? JSONSerialization.jsonObject(with: payload) as? [String: Any],
            let value = (object["connectionTimeoutMs"] as? NSNumber)?.intValue, value > 0
        {
            return .milliseconds(value)
        }
        return configuration.defaultKeepAliveTimeout
    }

    private func acknowledge(_ generation: Int, timeout: Duration) {
        guard var link = links[generation], !link.acked else { return }
        link.acked = true
        let watchdog = KeepAliveWatchdog(timeout: timeout)
        link.keepAlive = watchdog
        let waiter = link.ackWaiter
        link.ackWaiter = nil
        link.tasks.append(Task { [weak self, clock] in
            do { try await watchdog.waitForSilence(clock: clock) } catch { return }
            await self?.keepAliveExpired(generation, after: timeout)
        })
        links[generation] = link
        logger.debug("connection acknowledged", metadata: ["keepAlive": "\(timeout)"])
        waiter?.resume(returning: .success(()))
    }

    private func handleControl(_ type: String, id: String?, frame: Data, on generation: Int) -> FrameAction {
        switch type {
        case "subscribe_success":
            guard let id else { return .none }
            return subscriptionConfirmed(id, on: generation)
        case "subscribe_error":
            guard let id else { return .none }
            let error = AppSyncServerError.first(of: AppSyncServerError.decodeErrors(from: frame), type: type)
            rejectSubscription(id, error.subscriptionError)
            return .rotationStep
        case "unsubscribe_success", "unsubscribe_error":
            guard let id, rotation?.from == generation else { return .none }
            rotation?.awaitingUnsubscribe?.remove(id)
            return .rotationUnsubscribed
        case "publish_success":
            guard let id else { return .none }
            struct Reply: Decodable {
                var successful: [PublishedEvent]?
                var failed: [FailedEvent]?
            }
            do {
                let reply = try JSONDecoder().decode(Reply.self, from: frame)
                completePublish(id, .success(PublishResult(successful: reply.successful ?? [], failed: reply.failed ?? [])))
            } catch {
                completePublish(id, .failure(RealtimeError.protocolViolation("malformed publish_success: \(error)")))
            }
            return .none
        case "publish_error":
            guard let id else { return .none }
            let error = AppSyncServerError.first(of: AppSyncServerError.decodeErrors(from: frame), type: type)
            completePublish(id, .failure(RealtimeError.publishRejected(errorType: error.errorType, message: error.message)))
            return .none
        case "broadcast_error":
            let error = AppSyncServerError.first(of: AppSyncServerError.decodeErrors(from: frame), type: type)
            let channel = id.flatMap { subscriptions[$0]?.channel } ?? "?"
            logger.warning("broadcast_error", metadata: ["channel": "\(channel)", "errorType": "\(error.errorType)"])
            return .none
        case "connection_error":
            let error = AppSyncServerError.first(of: AppSyncServerError.decodeErrors(from: frame), type: type)
            logger.warning("connection_error", metadata: ["errorType": "\(error.errorType)"])
            let end: AppSyncLinkEnd = error.isAuthFailure ? .authRejected("\(error.errorType): \(error.message ?? "")") : .connectionError(error)
            return .close(end, "connection_error")
        case "error":
            let error = AppSyncServerError.first(of: AppSyncServerError.decodeErrors(from: frame), type: type)
            if let id, pendingPublishes[id] != nil {
                completePublish(id, .failure(RealtimeError.publishRejected(errorType: error.errorType, message: error.message)))
            } else if let id, let record = subscriptions[id], !record.isLive {
                rejectSubscription(id, error.subscriptionError)
                return .rotationStep
            } else {
                logger.warning("server error", metadata: ["errorType": "\(error.errorType)", "message": "\(error.message ?? "")"])
            }
            return .none
        default:
            logger.debug("ignored an unknown message type", metadata: ["type": "\(type)"])
            return .none
        }
    }

    private func subscriptionConfirmed(_ id: String, on generation: Int) -> FrameAction {
        guard var record = subscriptions[id] else { return .none }
        if record.rotationTarget == generation {
            record.rotationLive = true
            subscriptions[id] = record
            return .rotationStep
        }
        guard record.deliveringOn == generation, !record.isLive else { return .none }
        record.isLive = true
        if let start = record.interruptedAt {
            record.interruptedAt = nil
            subscriptions[id] = record
            record.sink.yield(.resumed(gap: GapWindow(start: start, end: wallClock.now())))
        } else {
            subscriptions[id] = record
            record.sink.yield(.live)
        }
        return .none
    }

    private func rejectSubscription(_ id: String, _ error: RealtimeError) {
        guard let record = subscriptions.removeValue(forKey: id) else { return }
        logger.warning("subscription rejected", metadata: ["channel": "\(record.channel)", "error": "\(error)"])
        record.sink.finish(throwing: error)
    }
}
