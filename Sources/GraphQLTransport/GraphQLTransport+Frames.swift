import Foundation
import SubscriberCore

extension GraphQLTransport {
    /// Handles one inbound event of the link; returns `false` when the link has ended.
    func handleInbound(_ event: WebSocketInboundEvent, on generation: Int) async -> Bool {
        guard let current = link, current.generation == generation, current.end == nil else { return false }
        switch event {
        case .closed(let info):
            linkEnded(generation, current.requestedEnd ?? .closed(info))
            return false
        case .message(let message):
            let action: FrameAction
            switch message {
            case .text(let text): action = text.withContiguousUTF8 { handleFrame($0, on: generation) }
            case .binary(let data): action = data.withUnsafeBytes { handleFrame($0.bindMemory(to: UInt8.self), on: generation) }
            }
            switch action {
            case .none: break
            case .subscriptionEnded: scheduleIdleClose()
            case .pong: try? await current.connection.send(.text(GraphQLOutboundMessage.pong))
            case .violation(let detail):
                logger.error("protocol violation by the server; closing", metadata: ["detail": "\(detail)"])
                await close(generation, as: .protocolViolation(detail), code: GraphQLCloseCode.badResponse, reason: String(detail.prefix(120)))
            }
            return true
        }
    }

    enum FrameAction {
        case none
        case subscriptionEnded
        case pong
        case violation(String)
    }

    /// Parses a frame once. For `next`, the value of the subscription field inside `data` is sliced out as the payload
    /// bytes; `errors` beside it travel with it.
    private func handleFrame(_ bytes: UnsafeBufferPointer<UInt8>, on generation: Int) -> FrameAction {
        let envelope: JSONEnvelope
        do { envelope = try JSONEnvelope(scanning: bytes) } catch { return .violation("malformed message: \(error)") }
        guard let type = envelope.string("type", in: bytes) else { return .violation("message without type") }
        let acked = link?.acked ?? false
        switch type {
        case "ping":
            return .pong
        case "pong":
            pongReceived()
            return .none
        case "connection_ack":
            guard !acked else { return .none }
            link?.acked = true
            let waiter = link?.ackWaiter
            link?.ackWaiter = nil
            waiter?.resume(returning: .success(()))
            return .none
        case _ where !acked:
            return .violation("\(type) before connection_ack")
        case "next":
            guard let id = envelope.string("id", in: bytes) else { return .violation("next without id") }
            guard let payload = envelope.member("payload", in: bytes), payload.kind == .object else {
                return .violation("next without an object payload")
            }
            guard let record = subscriptions[id], record.sentOn == generation else { return .none }
            record.sink.yield(.payload(Self.executionResult(UnsafeBufferPointer(rebasing: bytes[payload.value]))))
            return .none
        case "error":
            guard let id = envelope.string("id", in: bytes) else { return .violation("error without id") }
            guard let record = subscriptions.removeValue(forKey: id) else { return .none }
            let errors = (try? envelope.valueBytes("payload", in: bytes)).map { String(decoding: $0, as: UTF8.self) } ?? "[]"
            logger.warning("subscription ended with errors", metadata: ["id": "\(id)"])
            record.sink.finish(throwing: RealtimeError.graphQLErrors(errors))
            return .subscriptionEnded
        case "complete":
            guard let id = envelope.string("id", in: bytes) else { return .violation("complete without id") }
            guard let record = subscriptions.removeValue(forKey: id) else { return .none }
            record.sink.finish()
            return .subscriptionEnded
        default:
            return .violation("unknown message type \(type)")
        }
    }

    /// `{data, errors}` → the subscription field's value (the single member of `data`, or `data` itself), plus errors.
    static func executionResult(_ bytes: UnsafeBufferPointer<UInt8>) -> RealtimePayload {
        guard let result = try? JSONEnvelope(scanning: bytes) else { return RealtimePayload(json: Data(bytes)) }
        let errors = try? result.valueBytes("errors", in: bytes)
        guard let data = result.member("data", in: bytes) else { return RealtimePayload(json: Data("null".utf8), graphQLErrorsJSON: errors) }
        if data.kind == .object {
            let slice = UnsafeBufferPointer(rebasing: bytes[data.value])
            if let fields = try? JSONEnvelope(scanning: slice), fields.members.count == 1 {
                return RealtimePayload(json: Data(UnsafeBufferPointer(rebasing: slice[fields.members[0].rawValue])), graphQLErrorsJSON: errors)
            }
        }
        return RealtimePayload(json: Data(UnsafeBufferPointer(rebasing: bytes[data.rawValue])), graphQLErrorsJSON: errors)
    }
}
