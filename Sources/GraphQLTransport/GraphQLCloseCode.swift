import SubscriberCore

/// The graphql-transport-ws close codes and what the client does about each (the graphql-ws reference client's policy,
/// except 4403, which gets one retry with refreshed credentials because a new token may pass).
package enum GraphQLCloseCode {
    /// Codes after which reconnecting cannot help.
    package static let fatal: Set<UInt16> = [4400, 4401, 4406, 4409, 4429, 4500]
    /// The server rejected `connection_init` (forbidden).
    package static let forbidden: UInt16 = 4403
    /// The client's own close when the server breaks the protocol (the reference client's "bad response").
    package static let badResponse: UInt16 = 4004

    /// How a close the client did not ask for bears on reconnecting.
    static func ending(for info: WebSocketCloseInfo, hasSubscriptions: Bool) -> ReconnectBookkeeping.Ending {
        let code = info.effectiveCode
        if fatal.contains(code) { return .fatal(.closedByServer(code: code, reason: info.reason)) }
        if code == forbidden { return .authRejected("closed with 4403 \(info.reason)") }
        if code == 1000 && !hasSubscriptions { return .requested }
        return .retryable
    }
}
