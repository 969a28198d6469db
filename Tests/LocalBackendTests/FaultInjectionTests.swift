import AppSyncEventsTransport
import Foundation
import LocalBackend
import RealtimeTesting
import SubscriberCore
import Testing

/// `POST /vortex/faults` (admin only).
@Suite("Fault injection")
struct FaultInjectionTests {
    @Test("closeAll closes every WebSocket with the given code")
    func closeAll() async throws {
        try await withBackend { backend in
            let first = try await backend.session(.apiKey(TestCredentials.apiKey))
            let second = try await backend.session(TestCredentials.jwt("u-1"))
            let (status, json) = try await backend.admin("faults", #"{"action":"closeAll","code":4500}"#)
            #expect(status == 200)
            #expect((json["closed"] as? NSNumber)?.intValue == 2)
            #expect(try await first.socket.waitForClose() == 4500)
            #expect(try await second.socket.waitForClose() == 4500)
            // New connections are accepted afterwards.
            let third = try await backend.session(.apiKey(TestCredentials.apiKey))
            await third.close()
        }
    }

    @Test("refuseConnections refuses the next N upgrades with 503, then upgrades again")
    func refuseConnections() async throws {
        try await withBackend { backend in
            try await backend.admin("faults", #"{"action":"refuseConnections","count":2}"#)
            let offered = backend.authorizer(.apiKey(TestCredentials.apiKey)).subprotocols()
            for _ in 0..<2 {
                let refused = try await RawHTTP.upgrade(
                    host: backend.host, port: backend.port, path: "/event/realtime", subprotocols: offered)
                #expect(refused.status == 503)
                #expect(refused.body.contains("ServiceUnavailable"))
            }
            let accepted = try await RawHTTP.upgrade(host: backend.host, port: backend.port, path: "/event/realtime", subprotocols: offered)
            #expect(accepted.status == 101)
        }
    }

    @Test("stopKeepAlive silences ka; enabled:false resumes it")
    func stopKeepAlive() async throws {
        try await withBackend({ $0.keepAliveInterval = .milliseconds(50) }) { backend in
            let session = try await backend.session(.apiKey(TestCredentials.apiKey))
            #expect(try await session.socket.next()["type"] as? String == "ka")
            try await backend.admin("faults", #"{"action":"stopKeepAlive","enabled":true}"#)
            // A ka already queued may come before the first barrier, none after it: the connection decides on each ka on
            // the actor that answers the barrier, and the fault was on before the barrier was sent. Then two keep-alive
            // timers fire and withhold theirs (explicit events), and nothing came between the two barriers.
            _ = try await session.messagesBeforeBarrier(keepAlives: true)
            let faults = backend.server.faults
            let withheld = faults.keepAlivesWithheld
            try await waitUntil("two keep-alives withheld") { faults.keepAlivesWithheld >= withheld + 2 }
            #expect(try await session.messagesBeforeBarrier(keepAlives: true).isEmpty, "no ka while stopped")
            try await backend.admin("faults", #"{"action":"stopKeepAlive","enabled":false}"#)
            #expect(try await session.socket.next()["type"] as? String == "ka")
            await session.close()
        }
    }

    @Test("dropFrames drops the next N data frames only")
    func dropFrames() async throws {
        try await withBackend { backend in
            let session = try await backend.session(.apiKey(TestCredentials.apiKey))
            #expect(try await session.subscribe("default/d", id: "d")["type"] as? String == "subscribe_success")
            try await backend.admin("faults", #"{"action":"dropFrames","count":2}"#)
            let reply = try await session.publish("default/d", ["1", "2", "3"])
            #expect(reply["type"] as? String == "publish_success")
            #expect(try await session.socket.nextSkippingKeepAlive()["event"] as? String == "3")
            await session.close()
        }
    }

    @Test("delayFrames delays outgoing frames")
    func delayFrames() async throws {
        try await withBackend { backend in
            let session = try await backend.session(.apiKey(TestCredentials.apiKey))
            try await backend.admin("faults", #"{"action":"delayFrames","milliseconds":200}"#)
            let clock = ContinuousClock()
            let start = clock.now
            #expect(try await session.subscribe("default/slow")["type"] as? String == "subscribe_success")
            #expect(clock.now - start >= .milliseconds(190))
            try await backend.admin("faults", #"{"action":"delayFrames","milliseconds":0}"#)
            await session.close()
        }
    }

    @Test("expireTokens: tokens issued before are refused, tokens issued after are accepted")
    func expireTokens() async throws {
        try await withBackend { backend in
            // Issued a minute ago: before the cut-off without waiting for the clock to move.
            let old = AuthCredentials.bearerToken(GraphQLFrames.token("u-1", issuedAt: Date(timeIntervalSinceNow: -60)))
            try await backend.admin("faults", #"{"action":"expireTokens"}"#)
            let refused = try await backend.open(old)
            // The server answers connection_init at once; without it, it would wait a second for the client first
            // (AppSyncConnection.reject), and that second, on a loaded machine, ate into the 5 s the test waits. When the
            // second passed first the send fails on the closing socket; the reply is there all the same.
            try? await refused.send(AppSyncFrames.connectionInit)
            let reply = try await refused.next()
            #expect(reply["type"] as? String == "connection_error")
            #expect(firstErrorMessage(reply)?.contains("Token expired") == true)
            await refused.close()
            let fresh = try await backend.session(TestCredentials.jwt("u-1"))
            await fresh.close()
        }
    }

    @Test("bad fault commands are 400; admin endpoints are absent without admin")
    func badCommands() async throws {
        try await withBackend { backend in
            let unknown = try await backend.admin("faults", #"{"action":"explode"}"#)
            let reserved = try await backend.admin("faults", #"{"action":"closeAll","code":1006}"#)
            let garbage = try await backend.admin("faults", "nope")
            #expect(unknown.status == 400)
            #expect(reserved.status == 400)
            #expect(garbage.status == 400)
        }
        try await withBackend({ $0.admin = false }) { backend in
            #expect(backend.endpoints.admin == nil)
            let url = try #require(URL(string: "http://\(backend.host):\(backend.port)/vortex/faults"))
            let response = try await URLSessionHTTPClient().post(url: url, headers: [:], body: Data(#"{"action":"closeAll"}"#.utf8))
            #expect(response.status == 404)
        }
    }
}
