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
        withBytes(message) { bytes in
            guard let envelope = try? JSONEnvelope(scanning: bytes), let type = envelope.string("type", in: bytes) else {
                return .fail(.protocolViolation("malformed message"), closeCode: GraphQLCloseCode.badResponse, reason: "malformed message")
            }
            switch type {
            case "connection_ack":
                let configuration = state.configuration
                guard let interval = configuration.pingInterval else { return .acknowledged(.none) }
                return .acknowledged(.clientPing(interval: interval, timeout: configuration.pongTimeout))
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

    func handleFrame(_ message: WebSocketMessage) -> LinkFrameStep {
        withBytes(message) { handle($0) }
    }

    func pendingMessages() -> [WebSocketMessage] { state.pendingMessages(on: id) }

    func pingMessage() -> WebSocketMessage? { .text(GraphQLOutboundMessage.ping) }

    func timerFired(_ token: Int) { state.timerFired(token, on: id) }

    func rotationDue() {}

    private func withBytes<R>(_ message: WebSocketMessage, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        switch message {
        case .text(let text): text.withContiguousUTF8(body)
        case .binary(let data): data.withUnsafeBytes { body($0.bindMemory(to: UInt8.self)) }
        }
    }

    private func violation(_ detail: String) -> LinkFrameStep {
        logger.error("protocol violation by the server; closing", metadata: ["detail": "\(detail)"])
        return .close(.protocolViolation(detail), code: GraphQLCloseCode.badResponse, reason: String(detail.prefix(120)))
    }

    private func handle(_ bytes: UnsafeBufferPointer<UInt8>) -> LinkFrameStep {
        let envelope: JSONEnvelope
        // One pass: `payload` and its `data` are scanned member by member on the way (see executionResult).
        do { envelope = try JSONEnvelope(scanning: bytes, descendingInto: ["payload", "data"]) } catch {
            return violation("malformed message: \(error)")
        }
        guard let type = envelope.string("type", in: bytes) else { return violation("message without type") }
        switch type {
        case "next":
            guard let messageID = envelope.string("id", in: bytes) else { return violation("next without id") }
            guard let payload = envelope.member("payload", in: bytes), payload.kind == .object else {
                return violation("next without an object payload")
            }
            state.deliver(Self.executionResult(envelope, in: bytes), to: messageID, on: id)
            return .handled
        case "ping":
            return .reply(.text(GraphQLOutboundMessage.pong))
        case "pong", "connection_ack":
            return .handled
        case "error":
            guard let messageID = envelope.string("id", in: bytes) else { return violation("error without id") }
            let errors = (try? envelope.valueBytes("payload", in: bytes)).map { String(decoding: $0, as: UTF8.self) } ?? "[]"
            state.ended(messageID, errorsJSON: errors)
            return .handled
        case "complete":
            guard let messageID = envelope.string("id", in: bytes) else { return violation("complete without id") }
            state.ended(messageID, errorsJSON: nil)
            return .handled
        default:
            return violation("unknown message type \(type.prefix(40))")
        }
    }

    /// `{data, errors}` → the subscription field's value (the single member of `data`, or `data` itself), plus errors.
    /// `data` is copied out of the frame once; the field's value is a slice of that copy.
    static func executionResult(_ envelope: JSONEnvelope, in bytes: UnsafeBufferPointer<UInt8>) -> RealtimePayload {
        guard let result = envelope.nested.first ?? nil else { return RealtimePayload(json: Data("null".utf8)) }
        func member(_ key: StaticString) -> JSONEnvelope.Member? {
            key.withUTF8Buffer { wanted in
                result.first { !$0.keyHasEscapes && JSONEnvelope.bytes($0.key, in: bytes, equal: wanted) }
            }
        }
        let errors = member("errors").flatMap { errors -> Data? in
            guard errors.kind == .string, errors.valueHasEscapes else { return Data(UnsafeBufferPointer(rebasing: bytes[errors.value])) }
            return try? JSONEnvelope.unescape(bytes, errors.value)
        }
        guard let data = member("data") else {
            return RealtimePayload(json: Data("null".utf8), graphQLErrorsJSON: errors)
        }
        let dataJSON = Data(UnsafeBufferPointer(rebasing: bytes[data.rawValue]))
        if data.kind == .object, let fields = envelope.nested.count > 1 ? envelope.nested[1] : nil, fields.count == 1 {
            // Offsets within the data object's copy.
            let field = fields[0].rawValue
            let start = dataJSON.startIndex + field.lowerBound - data.rawValue.lowerBound
            let json = dataJSON[start..<(start + field.count)]
            return RealtimePayload(json: json, graphQLErrorsJSON: errors, graphQLDataJSON: dataJSON)
        }
        return RealtimePayload(json: dataJSON, graphQLErrorsJSON: errors, graphQLDataJSON: dataJSON)
    }
}
