import SubscriberCore

/// The transport's one WebSocket connection (actor-confined, addressed by generation).
struct GraphQLLink {
    let generation: Int
    let connection: any WebSocketConnection
    var acked = false
    var ackWaiter: CheckedContinuation<Result<Void, GraphQLLinkEnd>, Never>?
    var endWaiters: [CheckedContinuation<GraphQLLinkEnd, Never>] = []
    var end: GraphQLLinkEnd?
    var requestedEnd: GraphQLLinkEnd?
    var pongWaiter: CheckedContinuation<Bool, Never>?
    var tasks: [Task<Void, Never>] = []
}

/// Why the link ended.
enum GraphQLLinkEnd: Error, Sendable, Equatable, CustomStringConvertible {
    case openFailed(String, authRejected: Bool)
    case closed(WebSocketCloseInfo)
    case ackTimeout(Duration)
    case pongTimeout(Duration)
    case protocolViolation(String)
    case requested

    var description: String {
        switch self {
        case .openFailed(let detail, _): "open failed: \(detail)"
        case .closed(let info): "closed \(info)"
        case .ackTimeout(let after): "no connection_ack within \(after)"
        case .pongTimeout(let after): "no pong within \(after)"
        case .protocolViolation(let detail): "protocol violation: \(detail)"
        case .requested: "closed by client"
        }
    }
}

/// The transport's record of one subscription (actor-confined).
struct GraphQLSubscriptionRecord {
    let id: String
    let operation: GraphQLOperation
    let sequence: Int
    let sink: SubscriptionSink
    /// The link `subscribe` was sent on; `nil` while waiting for a connection.
    var sentOn: Int?
    /// Whether it has ever been live (then a later re-subscribe reports `resumed`).
    var everLive = false
    var interruptedAt: Date?
}

import Foundation
