import Foundation

/// A complete WebSocket data message (fragments already joined).
public enum WebSocketMessage: Sendable, Equatable {
    /// A text message.
    case text(String)
    /// A binary message.
    case binary(Data)
}

/// How a WebSocket connection ended, as seen by the side that reads it.
public struct WebSocketCloseInfo: Sendable, Equatable, CustomStringConvertible {
    /// The close code from the peer's close frame; `nil` when the connection ended without one
    /// (transport failure, which RFC 6455 reports as 1006).
    public var code: UInt16?
    /// The close reason from the peer's close frame, or a description of the transport failure.
    public var reason: String
    /// Whether the close was started by this side (``WebSocketConnection/close(code:reason:)`` or ``WebSocketConnection/abort()``).
    public var initiatedLocally: Bool

    /// Creates close information.
    public init(code: UInt16?, reason: String = "", initiatedLocally: Bool = false) {
        self.code = code
        self.reason = reason
        self.initiatedLocally = initiatedLocally
    }

    /// The code with RFC 6455's reserved value 1006 for "closed abnormally" when no frame arrived.
    public var effectiveCode: UInt16 { code ?? 1006 }

    public var description: String {
        let who = initiatedLocally ? "local" : "remote"
        return reason.isEmpty ? "\(effectiveCode) (\(who))" : "\(effectiveCode) \(reason) (\(who))"
    }

    /// How every connector reports a connection that was aborted (``WebSocketConnection/abort()``).
    package static let aborted = WebSocketCloseInfo(code: nil, reason: "aborted", initiatedLocally: true)

    /// `reason` as a close frame can carry it, for every connector: a control frame holds at most 125 bytes (RFC 6455
    /// §5.5), the code and 123 bytes of reason, cut at a character boundary.
    package static func frameReason(_ reason: String) -> String {
        var cut = reason
        while cut.utf8.count > 123 { cut.removeLast() }
        return cut
    }
}

extension WebSocketMessage {
    /// Runs `body` over the message's bytes (a text message's UTF-8) without copying a native string or the data: how
    /// both transports' drivers read every frame. Inlinable, so the per-frame path costs what it did in each driver.
    @inlinable
    package func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        switch self {
        case .text(let text): text.withContiguousUTF8(body)
        case .binary(let data): data.withUnsafeBytes { body($0.bindMemory(to: UInt8.self)) }
        }
    }
}
