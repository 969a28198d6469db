import Foundation
import LocalBackend
import RealtimeTesting
import SubscriberCore
import Testing
import VortexVocabulary

/// A raw graphql-transport-ws socket for conformance tests: a ``RawWebSocket`` that offers the protocol's subprotocol,
/// reports the server's close code *and reason*, and syncs with `ping`.
final class GraphQLRawSocket: Sendable {
    /// How the server closed the connection.
    struct Close: Sendable, Equatable, CustomStringConvertible {
        var code: UInt16?
        var reason: String
        var description: String { "\(code.map(String.init) ?? "no code") \(reason)" }
    }

    private let socket: RawWebSocket

    private init(socket: RawWebSocket) { self.socket = socket }

    /// Connects (offering `subprotocols`), waits for the upgrade and starts recording.
    static func connect(
        _ url: String, subprotocols: [String] = ["graphql-transport-ws"], timeout: Duration = rawSocketDeadline
    ) async throws -> GraphQLRawSocket {
        GraphQLRawSocket(socket: try await RawWebSocket.connect(url, subprotocols: subprotocols, timeout: timeout))
    }

    /// Sends one text frame.
    func send(_ text: String) async throws { try await socket.send(text) }

    /// The next message as text, removing it from the inbox.
    func nextText(timeout: Duration = rawSocketDeadline) async throws -> String { try await socket.nextText(timeout: timeout) }

    /// The next message as a JSON object.
    func next(timeout: Duration = rawSocketDeadline) async throws -> [String: Any] { try await socket.next(timeout: timeout) }

    /// Waits for the connection to end; returns the server's close code and reason.
    func waitForClose(timeout: Duration = rawSocketDeadline) async throws -> Close {
        let close = try await socket.waitForCloseInfo(timeout: timeout)
        return Close(code: close.code, reason: close.reason)
    }

    /// Whether the connection has ended.
    var isClosed: Bool { socket.isClosed }

    /// Closes normally and waits for the end.
    func close() async { await socket.close() }

    /// Sends `ping` and returns every message that arrived before the `pong`. Messages are answered in order, so
    /// once the pong is back every earlier `subscribe` is attached to the bus (or was answered with `error`).
    func sync(timeout: Duration = rawSocketDeadline) async throws -> [[String: Any]] {
        try await send(GraphQLFrames.ping)
        var before: [[String: Any]] = []
        while true {
            let message = try await next(timeout: timeout)
            if message["type"] as? String == "pong" { return before }
            before.append(message)
        }
    }
}

/// The client-to-server frames of graphql-transport-ws.
enum GraphQLFrames {
    static let ping = #"{"type":"ping"}"#

    /// A development JWT for `user`, signed with the test secret.
    static func token(_ user: String, issuedAt: Date = Date(), ttl: Duration = .seconds(600)) -> String {
        try! DevelopmentToken.make(secret: TestCredentials.jwtSecret, user: user, issuedAt: issuedAt, ttl: ttl)
    }

    /// `connection_init` with `{"Authorization": token}` (no payload when `token` is nil).
    static func connectionInit(token: String?) -> String {
        guard let token else { return #"{"type":"connection_init"}"# }
        return JSONString.object([
            (key: "type", json: #""connection_init""#), (key: "payload", json: JSONString.sortedStringObject(["Authorization": token])),
        ])
    }

    /// `subscribe` with a payload of `query`, `operationName` and `variables` (a JSON object text).
    static func subscribe(id: String, query: String, operationName: String? = nil, variables: String? = nil) -> String {
        var payload = [(key: "query", json: JSONString.quoted(query))]
        if let operationName { payload.append((key: "operationName", json: JSONString.quoted(operationName))) }
        if let variables { payload.append((key: "variables", json: variables)) }
        return JSONString.object([
            (key: "id", json: JSONString.quoted(id)), (key: "type", json: #""subscribe""#),
            (key: "payload", json: JSONString.object(payload)),
        ])
    }

    /// `subscribe` with one of the notifier's operations.
    static func subscribe(id: String, _ operation: GraphQLOperation) -> String {
        subscribe(id: id, query: operation.query, operationName: operation.operationName, variables: operation.variablesJSON)
    }

    static func complete(id: String) -> String {
        JSONString.object([(key: "id", json: JSONString.quoted(id)), (key: "type", json: #""complete""#)])
    }
}

/// The five legacy subscriptions exactly as the notifier sends them (copied from
/// `Sources/BackendNotifier/Notifier/LegacyGraphQLDocuments.swift`, which selects every field of the schema).
enum NotifierLegacyOperations {
    enum Upstream: String, Sendable, CaseIterable {
        case device, archive, organization, role, revoke
    }

    static let deviceFields = "mac derivant online recording fwUpdateState thingName deviceGroupID orgId siteId eventType timestamp"
    static let archiveFields =
        "mac derivant thingName deviceGroupID orgId siteId status videoLength videoSize cloudSize hasH265 createdAt eventType timestamp"
    static let organizationFields =
        "orgId licensePhase isFreePlan AIControlSetting { uuid termsAgreement options } eventType timestamp"

    /// The subscription field an upstream uses.
    static func field(_ upstream: Upstream) -> String {
        switch upstream {
        case .device: "subscribeDeviceState"
        case .archive: "subscribeArchiveState"
        case .organization: "subscribeOrganizationState"
        case .role: "subscribeRoleChange"
        case .revoke: "subscribeUserTokenRevoke"
        }
    }

    /// The upstream a domain event kind arrives on.
    static func upstream(for kind: VortexEventKind) -> Upstream {
        switch kind {
        case .devicePresence, .deviceRecording, .deviceFirmware: .device
        case .archiveState: .archive
        case .licensePhase, .plan, .aiSettings: .organization
        case .roleChanged: .role
        case .tokenRevoked: .revoke
        }
    }

    static func operation(for upstream: Upstream, argument: String) -> GraphQLOperation {
        let (name, field, parameter, selection): (String, String, String, String) =
            switch upstream {
            case .device: ("DeviceState", "subscribeDeviceState", "orgId", deviceFields)
            case .archive: ("ArchiveState", "subscribeArchiveState", "orgId", archiveFields)
            case .organization: ("OrganizationState", "subscribeOrganizationState", "orgId", organizationFields)
            case .role: ("RoleChange", "subscribeRoleChange", "userId", "reason eventType timestamp")
            case .revoke: ("UserTokenRevoke", "subscribeUserTokenRevoke", "userId", "userId revokedAt reason requestId eventType timestamp")
            }
        return GraphQLOperation(
            query: "subscription \(name)($\(parameter): String!) { \(field)(\(parameter): $\(parameter)) { \(selection) } }",
            operationName: name,
            variablesJSON: JSONString.sortedStringObject([parameter: argument]))
    }

    /// The operation for `user` (of `organization`): organization upstreams take the organization, the others the user.
    static func operation(for upstream: Upstream, user: String, organization: String) -> GraphQLOperation {
        switch upstream {
        case .device, .archive, .organization: operation(for: upstream, argument: organization)
        case .role, .revoke: operation(for: upstream, argument: user)
        }
    }
}

extension Backend {
    /// Opens a raw `/graphql` socket (no message sent).
    func graphQLSocket(subprotocols: [String] = ["graphql-transport-ws"]) async throws -> GraphQLRawSocket {
        try await GraphQLRawSocket.connect(endpoints.graphql, subprotocols: subprotocols)
    }

    /// Opens a `/graphql` socket, sends `connection_init` with `user`'s JWT and checks the `connection_ack`.
    func graphQLSession(_ user: String) async throws -> GraphQLRawSocket {
        let socket = try await graphQLSocket()
        try await socket.send(GraphQLFrames.connectionInit(token: GraphQLFrames.token(user)))
        let ack = try await socket.next()
        #expect(ack["type"] as? String == "connection_ack", "expected connection_ack, got \(ack)")
        return socket
    }
}

/// The `payload.data.<field>` object of a `next` message.
func nextData(_ message: [String: Any], field: String) -> [String: Any]? {
    ((message["payload"] as? [String: Any])?["data"] as? [String: Any])?[field] as? [String: Any]
}

/// The messages of `payload` errors of an `error` message.
func graphQLErrorMessages(_ message: [String: Any]) -> [String] {
    (message["payload"] as? [[String: Any]] ?? []).compactMap { $0["message"] as? String }
}
