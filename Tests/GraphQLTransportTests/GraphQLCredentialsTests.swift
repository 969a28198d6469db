import Foundation
import RealtimeTesting
import SubscriberCore
import Testing

@testable import GraphQLTransport

/// graphql-transport-ws carries credentials only in `connection_init`: every (re)connect asks the session anew.
@Suite("GraphQL: credentials at connect")
struct GraphQLCredentialsTests {
    @Test("every reconnect builds connection_init from the credentials of that attempt")
    func reconnectCarriesTheNewToken() async throws {
        let auth = ScriptedAuthSession(.bearerToken("jwt-1"), .bearerToken("jwt-2"), .bearerToken("jwt-3"))
        let harness = try GraphQLHarness(auth: auth)
        let (probe, first, id) = try await harness.live()
        first.closeFromServer(code: 1001, reason: "going away")
        try await harness.clock.waitForSleeper(sleeping: .seconds(10))
        harness.clock.advance(by: .seconds(10))
        let second = try await harness.acceptConnection(expectToken: "jwt-2")
        #expect(try await GraphQLHarness.expectSubscribe(on: second) == id)
        second.failTransport()
        try await harness.clock.waitForSleeper(sleeping: .seconds(10))
        harness.clock.advance(by: .seconds(10))
        let third = try await harness.acceptConnection(expectToken: "jwt-3")
        #expect(try await GraphQLHarness.expectSubscribe(on: third) == id)
        #expect(auth.credentialRequests == [false, false, false], "asked once per attempt, without forcing a refresh")
        _ = probe
        await harness.transport.disconnect()
    }

    @Test("a custom connectionPayload is built per attempt from that attempt's credentials")
    func customPayloadPerAttempt() async throws {
        let built = Locked<[String]>([])
        let auth = ScriptedAuthSession(.bearerToken("jwt-1"), .bearerToken("jwt-2"))
        let harness = try GraphQLHarness(auth: auth) { configuration in
            configuration.connectionPayload = { credentials in
                guard case .bearerToken(let token) = credentials else { return "{}" }
                built.withLock { $0.append(token) }
                return JSONString.sortedStringObject(["authToken": "Bearer \(token)"])
            }
        }
        _ = await harness.subscribe()
        let first = try await harness.server.nextConnection()
        #expect(try await first.nextSentJSON()["payload"] as? [String: String] == ["authToken": "Bearer jwt-1"])
        first.emit(#"{"type":"connection_ack"}"#)
        _ = try await GraphQLHarness.expectSubscribe(on: first)
        first.closeFromServer(code: 1012)
        try await harness.clock.waitForSleeper(sleeping: .seconds(10))
        harness.clock.advance(by: .seconds(10))
        let second = try await harness.server.nextConnection()
        #expect(try await second.nextSentJSON()["payload"] as? [String: String] == ["authToken": "Bearer jwt-2"])
        #expect(built.withLock { $0 } == ["jwt-1", "jwt-2"])
        await harness.transport.disconnect()
    }

    @Test("the server sees a token only at connect: a later subscribe carries none and asks for no credentials")
    func subscribesCarryNoCredentials() async throws {
        let auth = ScriptedAuthSession(.bearerToken("jwt-1"))
        let harness = try GraphQLHarness(auth: auth)
        let (_, connection, _) = try await harness.live()
        auth.setCredentials(.bearerToken("jwt-2"))
        _ = await harness.subscribe()
        let frame = try await connection.nextSentJSON()
        #expect(frame["type"] as? String == "subscribe")
        #expect(!String(describing: frame).contains("jwt"))
        #expect(auth.credentialRequests == [false])
        await harness.transport.disconnect()
    }
}
