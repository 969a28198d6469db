import Foundation
import Logging
import SubscriberCore

/// The graphql-transport-ws half of one link: parses each frame once; `next` payloads are sliced out of the frame and
/// yielded from the reading task. A message the protocol does not allow closes the link with 4004 (the reference
/// client's "bad response"); the supervisor then reconnects per policy.
struct GraphQLLinkDriver: LinkDriver {
    let id: Int
    let state: GraphQLState
    let connectionPayload: String
    let logger: Logger

    func handshakeMessages() -> [WebSocketMessage] { [.text(GraphQLOutboundMessage.connectionInit(payload: connectionPayload))] }

    func handleHandshakeFrame(_ message: WebSocketMessage) -> LinkHandshakeStep {
        message.withBytes { bytes in
            guard let envelope = try? JSONEnvelope(scanning: bytes), let type = envelope.string("type", in: bytes) else {
                return .fail(.protocolViolation("malformed message"), closeCode: GraphQLCloseCode.badResponse, reason: "malformed message")
            }
            switch type {
            case "connection_ack":
                // The fallback where the server ignores WebSocket pings: the protocol's own `ping`.
                return .acknowledged(.protocolPing)
            case "ping":
                return .reply(.text(GraphQLOutboundMessage.pong))
            case "pong":
                return .pending
            default:
                let detail = "\(type.prefix(40)) before connection_ack"
                return .fail(.protocolViolation(detail), closeCode: GraphQLCloseCode.badResponse, reason: detail)
            }
        }
    }

    func linkOpened(_ control: LinkControl) { state.linkOpened(id, control: control) }

    func handleFrame(_ message: WebSocketMessage, into batch: DeliveryBatch) -> LinkFrameStep {
        message.withBytes { handle($0, batch) }
    }

    func pendingMessages() async -> [WebSocketMessage] { await state.pendingMessages(on: id) }

    func pingMessage() -> WebSocketMessage? { .text(GraphQLOutboundMessage.ping) }

    func timerFired(_ token: Int) { state.timerFired(token, on: id) }

    func rotationDue() {}

    private func violation(_ detail: String) -> LinkFrameStep {
        logger.error("protocol violation by the server; closing", metadata: ["detail": "\(detail)"])
        return .close(.protocolViolation(detail), code: GraphQLCloseCode.badResponse, reason: String(detail.prefix(120)))
    }

    /// The members a message is routed on, collected in one scan that stores nothing else (no allocation per frame).
    private struct Frame {
        var type: JSONEnvelope.Member?
        var id: JSONEnvelope.Member?
        var payload: JSONEnvelope.Member?
        /// The first `payload.data` and `payload.errors` (when `payload` is an object).
        var data: JSONEnvelope.Member?
        var errors: JSONEnvelope.Member?
        /// How many members `payload.data` has (when it is an object), and the first.
        var fieldCount = 0
        var field: JSONEnvelope.Member?

        static let path: [StaticString] = ["payload", "data"]

        init(scanning bytes: UnsafeBufferPointer<UInt8>) throws(JSONScanError) {
            var frame = Frame()
            // As `JSONEnvelope.member(_:in:)`: the first member of a name counts.
            try JSONEnvelope.scan(bytes, descendingInto: Self.path) { depth, member in
                switch depth {
                case 0:
                    if frame.type == nil, member.hasKey("type", in: bytes) {
                        frame.type = member
                    } else if frame.id == nil, member.hasKey("id", in: bytes) {
                        frame.id = member
                    } else if frame.payload == nil, member.hasKey("payload", in: bytes) {
                        frame.payload = member
                    }
                case 1:
                    if frame.data == nil, member.hasKey("data", in: bytes) {
                        frame.data = member
                    } else if frame.errors == nil, member.hasKey("errors", in: bytes) {
                        frame.errors = member
                    }
                default:
                    if frame.fieldCount == 0 { frame.field = member }
                    frame.fieldCount += 1
                }
            }
            self = frame
        }

        private init() {}
    }

    private func handle(_ bytes: UnsafeBufferPointer<UInt8>, _ batch: DeliveryBatch) -> LinkFrameStep {
        let frame: Frame
        do { frame = try Frame(scanning: bytes) } catch {
            return violation("malformed message: \(error)")
        }
        guard let typeMember = frame.type, typeMember.kind == .string else { return violation("message without type") }
        // The hot path: `next` is recognised without building the type's string.
        if !typeMember.valueHasEscapes, Self.nextType.withUTF8Buffer({ JSONEnvelope.bytes(typeMember.value, in: bytes, equal: $0) }) {
            return next(frame, in: bytes, batch)
        }
        guard let type = typeMember.string(in: bytes) else { return violation("message without type") }
        let messageID = frame.id.flatMap { $0.kind == .string ? $0.string(in: bytes) : nil }
        switch type {
        case "next":
            return next(frame, in: bytes, batch)
        case "ping":
            return .reply(.text(GraphQLOutboundMessage.pong))
        case "pong", "connection_ack":
            return .handled
        case "error":
            guard let messageID else { return violation("error without id") }
            state.ended(messageID, errorsJSON: Self.errorsText(frame.payload, in: bytes))
            return .handled
        case "complete":
            guard let messageID else { return violation("complete without id") }
            state.ended(messageID, errorsJSON: nil)
            return .handled
        default:
            return violation("unknown message type \(type.prefix(40))")
        }
    }

    private static let nextType: StaticString = "next"

    /// An `error` message's payload as text (unescaped when it is a string); `[]` when absent or unreadable.
    private static func errorsText(_ payload: JSONEnvelope.Member?, in bytes: UnsafeBufferPointer<UInt8>) -> String {
        guard let payload else { return "[]" }
        guard payload.kind == .string, payload.valueHasEscapes else {
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[payload.value]), as: UTF8.self)
        }
        return (try? JSONEnvelope.unescape(bytes, payload.value)).map { String(decoding: $0, as: UTF8.self) } ?? "[]"
    }

    private func next(_ frame: Frame, in bytes: UnsafeBufferPointer<UInt8>, _ batch: DeliveryBatch) -> LinkFrameStep {
        guard let idMember = frame.id, idMember.kind == .string else { return violation("next without id") }
        guard let payload = frame.payload, payload.kind == .object else { return violation("next without an object payload") }
        let result = Self.executionResult(frame, in: bytes)
        if idMember.valueHasEscapes {
            guard let messageID = idMember.string(in: bytes) else { return violation("next without id") }
            state.deliver(result, to: messageID, on: id, into: batch)
        } else {
            state.deliver(result, toID: UnsafeBufferPointer(rebasing: bytes[idMember.value]), on: id, into: batch)
        }
        return .handled
    }

    /// `{data, errors}` → the subscription field's value (the single member of `data`, or `data` itself), plus errors.
    /// `data` is copied out of the frame once; the field's value is a slice of that copy.
    private static func executionResult(_ frame: Frame, in bytes: UnsafeBufferPointer<UInt8>) -> RealtimePayload {
        let errors = frame.errors.flatMap { errors -> Data? in
            guard errors.kind == .string, errors.valueHasEscapes else { return Data(UnsafeBufferPointer(rebasing: bytes[errors.value])) }
            return try? JSONEnvelope.unescape(bytes, errors.value)
        }
        guard let data = frame.data else {
            return RealtimePayload(json: Data("null".utf8), graphQLErrorsJSON: errors)
        }
        let dataJSON = Data(UnsafeBufferPointer(rebasing: bytes[data.rawValue]))
        if data.kind == .object, frame.fieldCount == 1, let field = frame.field?.rawValue {
            // Offsets within the data object's copy.
            let start = dataJSON.startIndex + field.lowerBound - data.rawValue.lowerBound
            let json = dataJSON[start..<(start + field.count)]
            return RealtimePayload(json: json, graphQLErrorsJSON: errors, graphQLDataJSON: dataJSON)
        }
        return RealtimePayload(json: dataJSON, graphQLErrorsJSON: errors, graphQLDataJSON: dataJSON)
    }
}
