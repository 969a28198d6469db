import AppSyncEventsWire
import Foundation
import RealtimeTesting
import SubscriberCore
import Testing

@testable import AppSyncEventsTransport

@Suite("IAM authorization on the wire")
struct AppSyncIAMTests {
    static let credentials = AWSCredentials(
        accessKeyID: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", sessionToken: "SESSION",
        region: "us-east-1")

    /// Re-signs `body` with the date the client used and checks the client's Authorization matches.
    private func expectSigned(_ auth: [String: String], body: String) throws {
        let endpoint = try AppSyncEndpoint(AppSyncHarness.endpointText)
        let amzDate = try #require(auth["x-amz-date"])
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        let date = try #require(formatter.date(from: amzDate))
        let expected = SigV4Signer(
            accessKeyID: Self.credentials.accessKeyID, secretAccessKey: Self.credentials.secretAccessKey,
            sessionToken: Self.credentials.sessionToken, region: "us-east-1", service: "appsync"
        ).sign(method: "POST", url: endpoint.httpURL, headers: AppSyncAuthorizer.iamBaseHeaders, body: Data(body.utf8), date: date)
        #expect(auth["Authorization"] == expected["Authorization"])
        #expect(auth["Authorization"]?.hasPrefix("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/") == true)
        #expect(auth["x-amz-security-token"] == "SESSION")
        #expect(auth["host"] == "abc.appsync-api.us-east-1.amazonaws.com")
        #expect(auth["content-type"] == "application/json; charset=UTF-8")
    }

    @Test("the connect header is signed over {} and each subscribe over {\"channel\":…}")
    func iamSignatures() async throws {
        let harness = try AppSyncHarness(auth: ScriptedAuthSession(.iam(Self.credentials)))
        let probe = await harness.subscribe("vortex-app/user/u-1/device/*")
        let connection = try await harness.acceptConnection()
        let header = try #require(connection.request.subprotocols.last)
        let decoded = try #require(Base64URL.decode(String(header.dropFirst("header-".count))))
        let connectAuth = try #require(JSONSerialization.jsonObject(with: decoded) as? [String: String])
        try expectSigned(connectAuth, body: "{}")
        let frame = try await connection.nextSentJSON()
        let subscribeAuth = try #require(frame["authorization"] as? [String: String])
        try expectSigned(subscribeAuth, body: #"{"channel":"vortex-app/user/u-1/device/*"}"#)
        _ = probe
        await harness.transport.disconnect()
    }

    @Test("a WebSocket publish is signed over the exact publish body, < > / and non-ASCII included")
    func iamPublishSignature() async throws {
        let harness = try AppSyncHarness(auth: ScriptedAuthSession(.iam(Self.credentials)))
        let transport = harness.transport
        let events = [#"{"html":"<b>a/b</b>","name":"é 漢字 🚀"}"#]
        let publishing = Task { try await transport.publish(PublishRequest(channel: "default/a", events: events)) }
        let connection = try await harness.acceptConnection()
        let frame = try await connection.nextSentJSON()
        let auth = try #require(frame["authorization"] as? [String: String])
        try expectSigned(auth, body: AppSyncOutboundMessage.publishBody(channel: "default/a", events: events))
        #expect(
            AppSyncOutboundMessage.publishBody(channel: "default/a", events: events)
                == #"{"channel":"default/a","events":["{\"html\":\"<b>a/b</b>\",\"name\":\"é 漢字 🚀\"}"]}"#)
        let id = try #require(frame["id"] as? String)
        connection.emit(#"{"type":"publish_success","id":"\#(id)","successful":[{"identifier":"x","index":0}],"failed":[]}"#)
        #expect(try await publishing.boundedValue().allSucceeded)
        await transport.disconnect()
    }

    @Test("an uppercase host with an explicit :443: connect and subscribe objects carry and sign the same lowercase host")
    func iamHostAsSent() async throws {
        let endpoint = try AppSyncEndpoint("https://ABC.Appsync-Api.us-east-1.amazonaws.com:443/event")
        let harness = try AppSyncHarness(auth: ScriptedAuthSession(.iam(Self.credentials))) { $0.endpoint = endpoint }
        let probe = await harness.subscribe("default/a")
        let connection = try await harness.acceptConnection()
        let header = try #require(connection.request.subprotocols.last)
        let decoded = try #require(Base64URL.decode(String(header.dropFirst("header-".count))))
        let connectAuth = try #require(JSONSerialization.jsonObject(with: decoded) as? [String: String])
        let frame = try await connection.nextSentJSON()
        let subscribeAuth = try #require(frame["authorization"] as? [String: String])
        for (auth, body) in [(connectAuth, "{}"), (subscribeAuth, #"{"channel":"default/a"}"#)] {
            let host = try #require(auth["host"])
            #expect(host == "abc.appsync-api.us-east-1.amazonaws.com")
            // Re-sign with the host exactly as received, the way the service checks it.
            let amzDate = try #require(auth["x-amz-date"])
            let date = try #require(SigV4TestDate.parse(amzDate))
            var headers = AppSyncAuthorizer.iamBaseHeaders
            headers["host"] = host
            let expected = SigV4Signer(
                accessKeyID: Self.credentials.accessKeyID, secretAccessKey: Self.credentials.secretAccessKey,
                sessionToken: Self.credentials.sessionToken, region: "us-east-1", service: "appsync"
            ).sign(method: "POST", url: endpoint.httpURL, headers: headers, body: Data(body.utf8), date: date)
            #expect(auth["Authorization"] == expected["Authorization"])
        }
        _ = probe
        await harness.transport.disconnect()
    }
}

/// Parses `x-amz-date` (`yyyyMMdd'T'HHmmss'Z'`, UTC).
enum SigV4TestDate {
    static func parse(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        return formatter.date(from: text)
    }
}
