/// One `POST /vortex/faults` body: `{"action":"closeAll","code":4500}`, `{"action":"stopKeepAlive","enabled":true}`,
/// `{"action":"delayFrames","milliseconds":200}`, `{"action":"dropFrames","count":3}`,
/// `{"action":"refuseConnections","count":2}`, `{"action":"expireTokens"}`, `{"action":"outage","protocol":"appsync",
/// "enabled":true}` (one protocol down, the other up) or `{"action":"reset"}`.
struct FaultCommand: Sendable, Decodable, Equatable {
    var action: String
    var code: Int?
    var enabled: Bool?
    var milliseconds: Int?
    var count: Int?
    var `protocol`: String?

    /// Applies the command; returns how many connections `closeAll` closed (0 for other actions), or throws a
    /// message for a bad command.
    func apply(to faults: FaultInjector) throws(AppSyncErrorEntry) -> Int {
        switch action {
        case "closeAll":
            let code = self.code ?? 1000
            guard Self.isSendableCloseCode(code) else {
                throw .badRequest("code \(code) cannot be sent in a close frame; use 1000-1003, 1007-1014 or 3000-4999")
            }
            return faults.closeAllConnections(code: UInt16(code))
        case "stopKeepAlive":
            faults.setKeepAliveStopped(enabled ?? true)
        case "delayFrames":
            guard let milliseconds, milliseconds >= 0 else { throw .badRequest("delayFrames needs milliseconds >= 0") }
            faults.setFrameDelay(.milliseconds(milliseconds))
        case "dropFrames":
            guard let count, count >= 0 else { throw .badRequest("dropFrames needs count >= 0") }
            faults.dropNextDataFrames(count)
        case "refuseConnections":
            guard let count, count >= 0 else { throw .badRequest("refuseConnections needs count >= 0") }
            faults.refuseNextConnections(count)
        case "expireTokens":
            faults.expireTokens()
        case "outage":
            guard let name = self.protocol, let kind = ConnectionRegistry.Kind(rawValue: name) else {
                throw .badRequest("outage needs protocol appsync or graphql")
            }
            return faults.setOutage(of: kind, enabled ?? true)
        case "reset":
            faults.reset()
        default:
            throw .badRequest("unknown action \"\(action)\"")
        }
        return 0
    }

    /// Whether RFC 6455 allows `code` in a close frame.
    static func isSendableCloseCode(_ code: Int) -> Bool {
        (1000...1003).contains(code) || (1007...1014).contains(code) || (3000...4999).contains(code)
    }
}
