import Foundation
import GraphQL
import OrderedCollections
import RealtimeTesting
import SubscriberCore
import Testing
import VortexVocabulary

@testable import LocalBackend

/// `GET /graphql`, graphql-transport-ws (protocols.md §2), with raw frames.
@Suite("GraphQL conformance: graphql-transport-ws")
struct GraphQLConformanceTests {
    static let deviceQuery =
        "subscription($orgId: String!) { subscribeDeviceState(orgId: $orgId) { thingName online eventType timestamp } }"

    // MARK: Close codes

    /// What a close case does before it expects the close.
    enum Step: Sendable {
        /// Sends `connection_init` with a valid JWT of `u-1` and expects `connection_ack`.
        case initialise
        /// Sends a frame verbatim.
        case send(String)
        /// Sends a frame and expects the connection to stay open (a `ping` answered afterwards).
        case sendAndStayOpen(String)
    }

    struct CloseCase: Sendable, CustomTestStringConvertible {
        var name: String
        var steps: [Step]
        var code: UInt16
        var reason: String
        var expireTokensFirst = false
        var subprotocols = ["graphql-transport-ws"]
        var testDescription: String { "\(name) → \(code)" }
    }

    static let subscribeA = GraphQLFrames.subscribe(id: "a", query: deviceQuery, variables: #"{"orgId":"o-1"}"#)

    static let closeCases: [CloseCase] = [
        CloseCase(name: "no connection_init within the init timeout", steps: [], code: 4408, reason: "Connection initialisation timeout"),
        CloseCase(
            name: "a token with a bad signature", steps: [.send(GraphQLFrames.connectionInit(token: GraphQLFrames.token("u-1") + "x"))],
            code: 4403, reason: "Forbidden"),
        CloseCase(name: "no payload", steps: [.send(GraphQLFrames.connectionInit(token: nil))], code: 4403, reason: "Forbidden"),
        CloseCase(
            name: "an API key instead of a JWT",
            steps: [.send(#"{"type":"connection_init","payload":{"x-api-key":"da2-local-test-key"}}"#)],
            code: 4403, reason: "Forbidden"),
        CloseCase(
            name: "an expired JWT",
            steps: [
                .send(
                    GraphQLFrames.connectionInit(
                        token: GraphQLFrames.token("u-1", issuedAt: Date().addingTimeInterval(-120), ttl: .seconds(60))))
            ],
            code: 4403, reason: "Forbidden"),
        CloseCase(
            name: "a JWT issued before the expireTokens fault",
            steps: [.send(GraphQLFrames.connectionInit(token: GraphQLFrames.token("u-1", issuedAt: Date().addingTimeInterval(-5))))],
            code: 4403, reason: "Forbidden", expireTokensFirst: true),
        CloseCase(
            name: "a second connection_init", steps: [.initialise, .send(GraphQLFrames.connectionInit(token: GraphQLFrames.token("u-1")))],
            code: 4429, reason: "Too many initialisation requests"),
        CloseCase(name: "subscribe before connection_ack", steps: [.send(subscribeA)], code: 4401, reason: "Unauthorized"),
        CloseCase(
            name: "subscribe with the id of an active subscription", steps: [.initialise, .sendAndStayOpen(subscribeA), .send(subscribeA)],
            code: 4409, reason: "Subscriber for a already exists"),
        CloseCase(name: "malformed JSON", steps: [.initialise, .send("{")], code: 4400, reason: "Invalid message received"),
        CloseCase(name: "malformed JSON before init", steps: [.send("{\"type\":")], code: 4400, reason: "Invalid message received"),
        CloseCase(name: "not an object", steps: [.initialise, .send("[1]")], code: 4400, reason: "Invalid message received"),
        CloseCase(name: "no type", steps: [.initialise, .send(#"{"id":"a"}"#)], code: 4400, reason: "Invalid message received"),
        CloseCase(
            name: "a type that is not a string", steps: [.initialise, .send(#"{"type":42}"#)], code: 4400,
            reason: "Invalid message received"),
        CloseCase(
            name: "an unknown type", steps: [.initialise, .send(#"{"type":"start","id":"a"}"#)], code: 4400,
            reason: "Invalid message received"),
        CloseCase(
            name: "a server-only type from the client", steps: [.initialise, .send(#"{"type":"next","id":"a","payload":{}}"#)], code: 4400,
            reason: "Unexpected message of type next received"),
        CloseCase(
            name: "subscribe without id", steps: [.initialise, .send(#"{"type":"subscribe","payload":{"query":"{ health }"}}"#)],
            code: 4400,
            reason: "Invalid message received"),
        CloseCase(
            name: "subscribe with an empty id",
            steps: [.initialise, .send(#"{"type":"subscribe","id":"","payload":{"query":"{ health }"}}"#)],
            code: 4400, reason: "Invalid message received"),
        CloseCase(
            name: "subscribe without payload", steps: [.initialise, .send(#"{"type":"subscribe","id":"a"}"#)], code: 4400,
            reason: "Invalid message received"),
        CloseCase(
            name: "subscribe whose query is not a string",
            steps: [.initialise, .send(#"{"type":"subscribe","id":"a","payload":{"query":1}}"#)],
            code: 4400, reason: "Invalid message received"),
        CloseCase(
            name: "subscribe whose variables are not an object",
            steps: [.initialise, .send(#"{"type":"subscribe","id":"a","payload":{"query":"{ health }","variables":[1]}}"#)], code: 4400,
            reason: "Invalid message received"),
        CloseCase(
            name: "a message over the size limit",
            steps: [.initialise, .send(String(repeating: " ", count: LocalBackendServer.maxMessageBytes + 1))],
            code: 4400, reason: "Message too large"),
        CloseCase(
            name: "complete without id", steps: [.initialise, .send(#"{"type":"complete"}"#)], code: 4400,
            reason: "Invalid message received"),
        CloseCase(
            name: "connection_init whose payload is not an object", steps: [.send(#"{"type":"connection_init","payload":"token"}"#)],
            code: 4400,
            reason: "Invalid message received"),
    ]

    // 4406 is written right behind the 101, where a client can miss a frame (swift-websocket's WSClient did): read it
    // from the raw bytes.
    @Test(
        "without graphql-transport-ws offered: close 4406 straight after the upgrade, before the client says anything",
        arguments: [[], ["graphql-ws"], ["graphql-ws", "other"]])
    func subprotocolNotAcceptable(offered: [String]) async throws {
        // A long init timeout: the close must not be the timer's.
        try await withBackend({ $0.graphQLInitTimeout = .seconds(60) }) { backend in
            let (response, frame) = try await RawHTTP.upgradeAndReadFirstFrame(
                host: backend.host, port: backend.port, path: "/graphql", subprotocols: offered)
            #expect(response.status == 101)
            #expect(response.header("Sec-WebSocket-Protocol") == nil)
            #expect(frame.closeCode == 4406)
            #expect(frame.closeReason == "Subprotocol not acceptable")
        }
    }

    @Test("every close code, provoked deliberately", arguments: closeCases)
    func closeCodes(_ closeCase: CloseCase) async throws {
        // Long enough that only the case about it meets the init timeout, even on a loaded 2-core machine.
        let initTimeout: Duration = TestTime.scaled(closeCase.steps.isEmpty ? .seconds(1) : .seconds(10))
        try await withBackend({ $0.graphQLInitTimeout = initTimeout }) { backend in
            if closeCase.expireTokensFirst { try await backend.admin("faults", #"{"action":"expireTokens"}"#) }
            let opened = ContinuousClock.now
            let socket = try await backend.graphQLSocket(subprotocols: closeCase.subprotocols)
            for step in closeCase.steps {
                switch step {
                case .initialise:
                    try await socket.send(GraphQLFrames.connectionInit(token: GraphQLFrames.token("u-1")))
                    #expect(try await socket.next()["type"] as? String == "connection_ack")
                case .send(let frame):
                    try await socket.send(frame)
                case .sendAndStayOpen(let frame):
                    try await socket.send(frame)
                    #expect(try await socket.sync().isEmpty, "no answer expected to \(frame)")
                }
            }
            let close = try await socket.waitForClose()
            #expect(close.code == closeCase.code)
            #expect(close.reason == closeCase.reason)
            if closeCase.steps.isEmpty { #expect(ContinuousClock.now - opened >= initTimeout, "not before the init timeout") }
            await socket.close()
        }
    }

    @Test("the init timeout is configurable and defaults to 3 s; an acknowledged connection outlives it")
    func initTimeout() async throws {
        #expect(LocalBackendConfiguration().graphQLInitTimeout == .seconds(3))
        // The acknowledged connection outlives the timeout only if its own handshake ends within it: under a sanitizer or
        // the soak's CPU burners it outlasted 1 s (2026-11-26) and then 2 s (2026-11-27), and was closed 4408 itself.
        // Then the next, longer timeout is tried; the behaviour is checked in full on the first that the handshake meets.
        var checked = false
        for seconds in [2, 5, 12] where !checked {
            try await withBackend({ $0.graphQLInitTimeout = TestTime.scaled(.seconds(seconds)) }) { backend in
                guard let socket = try? await backend.graphQLSession("u-1") else { return }
                // A connection opened after it and never acknowledged is closed by the timeout (4408): by then the
                // acknowledged one's timeout has passed too, and it is still open.
                let late = try await backend.graphQLSocket()
                #expect(try await late.waitForClose().code == 4408)
                #expect(try await socket.sync().isEmpty)
                #expect(!socket.isClosed)
                await socket.close()
                checked = true
            }
        }
        #expect(checked, "the session's handshake outlasted every init timeout tried, up to 12 s")
    }

    // MARK: Messages that keep the connection up

    @Test("the upgrade echoes graphql-transport-ws in Sec-WebSocket-Protocol")
    func subprotocolEchoed() async throws {
        try await withBackend { backend in
            let response = try await RawHTTP.upgrade(
                host: backend.host, port: backend.port, path: "/graphql", subprotocols: ["graphql-transport-ws"])
            #expect(response.status == 101)
            #expect(response.header("Sec-WebSocket-Protocol") == "graphql-transport-ws")
        }
    }

    @Test("ping → pong at once (before and after the ack), echoing the payload; an unsolicited pong is ignored")
    func pingPong() async throws {
        // A long init timeout: this test takes its time before connection_init, and a loaded machine must not fail it (the
        // thread sanitizer's run, under parallel builds, once took more than 30 s to get there).
        try await withBackend({ $0.graphQLInitTimeout = TestTime.scaled(.seconds(30)) }) { backend in
            let socket = try await backend.graphQLSocket()
            try await socket.send(GraphQLFrames.ping)
            let bare = try await socket.next()
            #expect(bare["type"] as? String == "pong")
            #expect(bare["payload"] == nil)
            try await socket.send(#"{"type":"ping","payload":{"seq":7,"note":"a/b"}}"#)
            let echoed = try await socket.next()
            #expect(echoed["type"] as? String == "pong")
            #expect(echoed["payload"] as? NSDictionary == ["seq": 7, "note": "a/b"] as NSDictionary)
            try await socket.send(#"{"type":"pong","payload":{"x":1}}"#)
            try await socket.send(GraphQLFrames.connectionInit(token: GraphQLFrames.token("u-1")))
            #expect(try await socket.next()["type"] as? String == "connection_ack")
            #expect(try await socket.sync().isEmpty)
            #expect(!socket.isClosed)
            await socket.close()
        }
    }

    struct ErrorCase: Sendable, CustomTestStringConvertible {
        var name: String
        var user = "u-1"
        var query: String
        var variables: String?
        var message: String
        var testDescription: String { name }
    }

    static let errorCases: [ErrorCase] = [
        ErrorCase(
            name: "an unknown field", query: "subscription { subscribeWeather(orgId: \"o-1\") { rain } }",
            message: "Cannot query field \"subscribeWeather\" on type \"Subscription\"."),
        ErrorCase(
            name: "an unknown output field", query: "subscription { subscribeDeviceState(orgId: \"o-1\") { colour } }",
            message: "Cannot query field \"colour\" on type \"DeviceStateOutput\"."),
        ErrorCase(name: "a syntax error", query: "subscription {", message: "Syntax Error"),
        ErrorCase(name: "a missing variable", query: deviceQuery, message: "Variable \"$orgId\" got invalid value"),
        ErrorCase(name: "another organization", query: deviceQuery, variables: #"{"orgId":"o-2"}"#, message: "Forbidden"),
        ErrorCase(
            name: "a user outside the directory asking for an organization", user: "stranger", query: deviceQuery,
            variables: #"{"orgId":"o-1"}"#,
            message: "Forbidden"),
        ErrorCase(
            name: "another user's role changes", query: "subscription { subscribeRoleChange(userId: \"u-2\") { reason } }",
            message: "Forbidden"),
        ErrorCase(
            name: "another user's token revocations",
            query: "subscription { subscribeUserTokenRevoke(userId: \"u-2\") { userId revokedAt } }", message: "Forbidden"),
    ]

    @Test("invalid or forbidden operations get an error message from the executor; the connection stays usable", arguments: errorCases)
    func operationErrors(_ errorCase: ErrorCase) async throws {
        try await withBackend { backend in
            let socket = try await backend.graphQLSession(errorCase.user)
            try await socket.send(GraphQLFrames.subscribe(id: "bad", query: errorCase.query, variables: errorCase.variables))
            let error = try await socket.next()
            #expect(error["type"] as? String == "error")
            #expect(error["id"] as? String == "bad")
            let messages = graphQLErrorMessages(error)
            #expect(messages.count >= 1)
            #expect(messages.first?.hasPrefix(errorCase.message) == true, "\(messages)")
            if errorCase.message == "Forbidden" {
                let first = try #require((error["payload"] as? [[String: Any]])?.first)
                #expect((first["path"] as? [String])?.count == 1)
                #expect(first["locations"] != nil)
            }
            // No complete follows; the same id is free again and the connection works.
            let retry = "subscription { subscribeRoleChange(userId: \"\(errorCase.user)\") { reason eventType } }"
            try await socket.send(GraphQLFrames.subscribe(id: "bad", query: retry))
            #expect(try await socket.sync().isEmpty, "no complete after error; the retry is accepted")
            await backend.server.bus.publish(DomainEvent(kind: .roleChanged, userId: errorCase.user, payload: ["reason": "promoted"]))
            let next = try await socket.next()
            #expect(next["type"] as? String == "next")
            #expect(next["id"] as? String == "bad")
            #expect(nextData(next, field: "subscribeRoleChange")?["reason"] as? String == "promoted")
            #expect(!socket.isClosed)
            await socket.close()
        }
    }

    @Test("subscribe → next on a domain event: {data:{<field>:{…}}} without errors")
    func subscribeNext() async throws {
        try await withBackend { backend in
            let socket = try await backend.graphQLSession("u-1")
            try await socket.send(GraphQLFrames.subscribe(id: "s1", query: Self.deviceQuery, variables: #"{"orgId":"o-1"}"#))
            #expect(try await socket.sync().isEmpty)
            let summary = await backend.server.bus.publish(
                DomainEvent(kind: .devicePresence, orgId: "o-1", deviceGroupId: "g-1", payload: ["thingName": "cam-1", "online": true]))
            let next = try await socket.next()
            #expect(next["type"] as? String == "next")
            #expect(next["id"] as? String == "s1")
            let payload = try #require(next["payload"] as? [String: Any])
            #expect(payload["errors"] == nil)
            let published = try JSONSerialization.jsonObject(with: Data(summary.event.utf8)) as? [String: Any]
            let expected: NSDictionary = [
                "thingName": "cam-1", "online": true, "eventType": "device/presenceChanged",
                "timestamp": try #require(published?["timestamp"] as? String),
            ]
            #expect(nextData(next, field: "subscribeDeviceState") as NSDictionary? == expected)
            await socket.close()
        }
    }

    @Test("complete from the client stops that operation only; its id can be used again")
    func clientComplete() async throws {
        try await withBackend { backend in
            let socket = try await backend.graphQLSession("u-1")
            try await socket.send(GraphQLFrames.subscribe(id: "dev", query: Self.deviceQuery, variables: #"{"orgId":"o-1"}"#))
            try await socket.send(
                GraphQLFrames.subscribe(id: "role", query: "subscription { subscribeRoleChange(userId: \"u-1\") { reason } }"))
            #expect(try await socket.sync().isEmpty)
            try await socket.send(GraphQLFrames.complete(id: "dev"))
            try await socket.send(GraphQLFrames.complete(id: "never-started"))
            #expect(try await socket.sync().isEmpty, "nothing is sent back for a client complete")
            await backend.server.bus.publish(
                DomainEvent(kind: .devicePresence, orgId: "o-1", deviceGroupId: "g-1", payload: ["thingName": "stale", "online": false]))
            await backend.server.bus.publish(DomainEvent(kind: .roleChanged, userId: "u-1", payload: ["reason": "r"]))
            #expect(try await socket.next()["id"] as? String == "role")
            try await socket.send(GraphQLFrames.subscribe(id: "dev", query: Self.deviceQuery, variables: #"{"orgId":"o-1"}"#))
            #expect(try await socket.sync().isEmpty, "the completed id is free again (no 4409)")
            // The next device event reaches the new operation. Had the completed one lived on, its `next` for the
            // earlier event would have come first: the server writes an operation's events in order, and this one
            // reached the bus before the role event that came before.
            await backend.server.bus.publish(
                DomainEvent(kind: .devicePresence, orgId: "o-1", deviceGroupId: "g-1", payload: ["thingName": "fresh", "online": true]))
            let next = try await socket.next()
            #expect(next["id"] as? String == "dev")
            #expect(
                nextData(next, field: "subscribeDeviceState")?["thingName"] as? String == "fresh", "nothing for the completed operation")
            await socket.close()
        }
    }

    @Test("the server sends complete when it ends an operation (a query: next, then complete)")
    func serverComplete() async throws {
        try await withBackend { backend in
            let socket = try await backend.graphQLSession("u-1")
            try await socket.send(GraphQLFrames.subscribe(id: "q", query: "query Health { health }", operationName: "Health"))
            let next = try await socket.next()
            #expect(next["type"] as? String == "next")
            #expect(((next["payload"] as? [String: Any])?["data"] as? [String: Any])?["health"] as? String == "ok")
            let complete = try await socket.next()
            #expect(complete["type"] as? String == "complete")
            #expect(complete["id"] as? String == "q")
            #expect(try await socket.sync().isEmpty)
            await socket.close()
        }
    }

    @Test("the notifier's five operations validate and execute, selecting every field")
    func notifierOperations() async throws {
        try await withBackend { backend in
            let socket = try await backend.graphQLSession("u-3")
            for upstream in NotifierLegacyOperations.Upstream.allCases {
                try await socket.send(
                    GraphQLFrames.subscribe(
                        id: upstream.rawValue, NotifierLegacyOperations.operation(for: upstream, user: "u-3", organization: "o-1")))
            }
            #expect(try await socket.sync().isEmpty, "no validation error")
            for event in GraphQLSamples.events(orgId: "o-1", deviceGroupId: "g-2", userId: "u-3") {
                await backend.server.bus.publish(event)
                let next = try await socket.next()
                let upstream = NotifierLegacyOperations.upstream(for: event.kind)
                #expect(next["id"] as? String == upstream.rawValue)
                let payload = try #require(next["payload"] as? [String: Any])
                #expect(payload["errors"] == nil, "\(payload)")
                let fields = try #require(nextData(next, field: NotifierLegacyOperations.field(upstream)))
                #expect(Set(fields.keys) == GraphQLSamples.selectedFields(upstream), "every selected field is in the result")
                #expect(fields["eventType"] as? String == event.kind.eventType)
            }
            await socket.close()
        }
    }

    // MARK: Faults

    @Test("closeAll and stop() close GraphQL sockets too; dropFrames drops next frames; delayFrames delays them")
    func faults() async throws {
        try await withBackend { backend in
            let socket = try await backend.graphQLSession("u-1")
            #expect(backend.server.connections.count(of: .graphQL) == 1)
            try await socket.send(
                GraphQLFrames.subscribe(id: "r", query: "subscription { subscribeRoleChange(userId: \"u-1\") { reason } }"))
            #expect(try await socket.sync().isEmpty)
            try await backend.admin("faults", #"{"action":"dropFrames","count":1}"#)
            await backend.server.bus.publish(DomainEvent(kind: .roleChanged, userId: "u-1", payload: ["reason": "dropped"]))
            await backend.server.bus.publish(DomainEvent(kind: .roleChanged, userId: "u-1", payload: ["reason": "kept"]))
            #expect(nextData(try await socket.next(), field: "subscribeRoleChange")?["reason"] as? String == "kept")
            try await backend.admin("faults", #"{"action":"delayFrames","milliseconds":300}"#)
            let sent = ContinuousClock.now
            await backend.server.bus.publish(DomainEvent(kind: .roleChanged, userId: "u-1", payload: ["reason": "late"]))
            #expect(nextData(try await socket.next(), field: "subscribeRoleChange")?["reason"] as? String == "late")
            #expect(ContinuousClock.now - sent >= .milliseconds(280))
            try await backend.admin("faults", #"{"action":"reset"}"#)
            let (_, json) = try await backend.admin("faults", #"{"action":"closeAll","code":4500}"#)
            #expect((json["closed"] as? NSNumber)?.intValue == 1)
            #expect(try await socket.waitForClose().code == 4500)
            let connections = backend.server.connections
            try await waitUntil("the connection to be unregistered when it ends", timeout: 3) { connections.count(of: .graphQL) == 0 }
            let second = try await backend.graphQLSession("u-1")
            await backend.server.stop()
            #expect(try await second.waitForClose().code == 1001)
        }
    }

    // MARK: The schema

    /// `docs/legacy-schema.graphql`, the schema the endpoint must serve.
    static func schemaFile() throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return try String(contentsOf: root.appendingPathComponent("docs/legacy-schema.graphql"), encoding: .utf8)
    }

    @Test("the served schema is docs/legacy-schema.graphql: same text, same printed schema")
    func schemaMatchesFile() throws {
        let file = try Self.schemaFile()
        #expect(LegacySchemaSDL.text == file, "regenerate LegacySchemaSDL.swift (see its header)")
        let served = try GraphQLRoute.schema.get()
        #expect(printSchema(schema: served) == printSchema(schema: try buildSchema(source: file)))
    }

    @Test("introspection over the socket lists exactly the file's types, fields, arguments and field types")
    func introspection() async throws {
        let expected = try buildSchema(source: try Self.schemaFile())
        let query = """
            { __schema { types { name kind fields { name type { ...T } args { name type { ...T } } } } } }
            fragment T on __Type { kind name ofType { kind name ofType { kind name } } }
            """
        try await withBackend { backend in
            let socket = try await backend.graphQLSession("u-1")
            try await socket.send(GraphQLFrames.subscribe(id: "i", query: query))
            let next = try await socket.next()
            let types = try #require(
                ((next["payload"] as? [String: Any])?["data"] as? [String: Any]).flatMap {
                    ($0["__schema"] as? [String: Any])?["types"] as? [[String: Any]]
                })
            let served = Dictionary(
                uniqueKeysWithValues: types.compactMap { type -> (String, [String: Any])? in
                    guard let name = type["name"] as? String, !name.hasPrefix("__") else { return nil }
                    return (name, type)
                })
            let fileTypes = expected.typeMap.keys.filter { !$0.hasPrefix("__") }
            #expect(Set(served.keys) == Set(fileTypes))
            for name in fileTypes {
                guard let type = expected.getType(name: name) as? GraphQLObjectType else { continue }
                let servedFields = (served[name]?["fields"] as? [[String: Any]]) ?? []
                let fields = try type.fields()
                // GraphQLSwift's introspection lists fields by name.
                #expect(servedFields.compactMap { $0["name"] as? String } == fields.keys.sorted(), "\(name) fields")
                for servedField in servedFields {
                    guard let fieldName = servedField["name"] as? String, let field = fields[fieldName] else { continue }
                    #expect(Self.typeText(servedField["type"]) == field.type.debugDescription, "\(name).\(fieldName) type")
                    let arguments = (servedField["args"] as? [[String: Any]] ?? []).map {
                        "\($0["name"] as? String ?? ""): \(Self.typeText($0["type"]))"
                    }
                    #expect(
                        arguments == field.args.map { "\($0.key): \($0.value.type.debugDescription)" }, "\(name).\(fieldName) arguments")
                }
            }
            await socket.close()
        }
    }

    /// An introspected `__Type` as SDL type text, for example `String!`.
    static func typeText(_ value: Any?) -> String {
        guard let type = value as? [String: Any] else { return "?" }
        switch type["kind"] as? String {
        case "NON_NULL": return typeText(type["ofType"]) + "!"
        case "LIST": return "[" + typeText(type["ofType"]) + "]"
        default: return type["name"] as? String ?? "?"
        }
    }
}

/// Domain events of every kind with every field the legacy outputs have, for the GraphQL tests.
enum GraphQLSamples {
    /// One event of each of the nine kinds; device and archive events in `deviceGroupId`; user events for `userId`.
    static func events(orgId: String, deviceGroupId: String, userId: String) -> [DomainEvent] {
        VortexEventKind.allCases.map { event($0, orgId: orgId, deviceGroupId: deviceGroupId, userId: userId) }
    }

    static func event(_ kind: VortexEventKind, orgId: String, deviceGroupId: String, userId: String) -> DomainEvent {
        let device: [String: JSONValue] = ["thingName": "cam-7", "mac": "AA:BB:CC:00:11:22", "derivant": "V120"]
        switch kind {
        case .devicePresence:
            return DomainEvent(kind: kind, orgId: orgId, deviceGroupId: deviceGroupId, payload: device.merging(["online": true]) { $1 })
        case .deviceRecording:
            return DomainEvent(kind: kind, orgId: orgId, deviceGroupId: deviceGroupId, payload: device.merging(["recording": false]) { $1 })
        case .deviceFirmware:
            return DomainEvent(
                kind: kind, orgId: orgId, deviceGroupId: deviceGroupId, payload: device.merging(["fwUpdateState": 14]) { $1 })
        case .archiveState:
            let archive: [String: JSONValue] = [
                "status": "Ready", "videoLength": 12.5, "videoSize": 1_048_576, "cloudSize": 524_288, "hasH265": true,
                "createdAt": "2025-01-31T09:15:02.125Z",
            ]
            return DomainEvent(kind: kind, orgId: orgId, deviceGroupId: deviceGroupId, payload: device.merging(archive) { $1 })
        case .licensePhase:
            return DomainEvent(kind: kind, orgId: orgId, payload: ["licensePhase": "GracePeriod"])
        case .plan:
            return DomainEvent(kind: kind, orgId: orgId, payload: ["isFreePlan": false])
        case .aiSettings:
            let options: JSONValue = [
                "zones": [["id": 1, "label": "door/<front>", "sensitivity": 0.75], ["id": 2, "enabled": false]], "mode": "smart",
                "thresholds": ["person": 0.5, "vehicle": 1], "note": nil, "tags": [],
            ]
            return DomainEvent(
                kind: kind, orgId: orgId, payload: ["aiControlSetting": ["uuid": "ai-42", "termsAgreement": true, "options": options]])
        case .roleChanged:
            return DomainEvent(kind: kind, orgId: orgId, userId: userId, payload: ["reason": "promoted"])
        case .tokenRevoked:
            return DomainEvent(kind: kind, userId: userId, payload: ["reason": "PASSWORD_CHANGED", "requestId": "req-9"])
        }
    }

    /// The top-level fields the notifier's operation for `upstream` selects.
    static func selectedFields(_ upstream: NotifierLegacyOperations.Upstream) -> Set<String> {
        let selection: String =
            switch upstream {
            case .device: NotifierLegacyOperations.deviceFields
            case .archive: NotifierLegacyOperations.archiveFields
            case .organization: "orgId licensePhase isFreePlan AIControlSetting eventType timestamp"
            case .role: "reason eventType timestamp"
            case .revoke: "userId revokedAt reason requestId eventType timestamp"
            }
        return Set(selection.split(separator: " ").map(String.init))
    }
}
