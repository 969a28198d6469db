import Foundation
import SubscriberCore
import Testing

@testable import AppSyncEventsTransport
@testable import AppSyncEventsWire

private let awsHTTP = "https://abc.appsync-api.us-east-1.amazonaws.com/event"
private let awsRealtime = "wss://abc.appsync-realtime-api.us-east-1.amazonaws.com/event/realtime"
private let awsHost = "abc.appsync-api.us-east-1.amazonaws.com"

@Suite("AppSyncEndpoint")
struct AppSyncEndpointTests {
    /// (input, http URL, realtime URL, host)
    @Test(
        "derives both URLs and the HTTP host",
        arguments: [
            (awsHTTP, awsHTTP, awsRealtime, awsHost),
            (awsRealtime, awsHTTP, awsRealtime, awsHost),
            (
                "https://abc.appsync-api.cn-north-1.amazonaws.com.cn/event",
                "https://abc.appsync-api.cn-north-1.amazonaws.com.cn/event",
                "wss://abc.appsync-realtime-api.cn-north-1.amazonaws.com.cn/event/realtime",
                "abc.appsync-api.cn-north-1.amazonaws.com.cn"
            ),
            (
                "wss://abc.appsync-realtime-api.cn-north-1.amazonaws.com.cn/event/realtime",
                "https://abc.appsync-api.cn-north-1.amazonaws.com.cn/event",
                "wss://abc.appsync-realtime-api.cn-north-1.amazonaws.com.cn/event/realtime",
                "abc.appsync-api.cn-north-1.amazonaws.com.cn"
            ),
            // Custom domains keep their host for both URLs.
            ("https://api.example.com/event", "https://api.example.com/event", "wss://api.example.com/event/realtime", "api.example.com"),
            (
                "wss://rt.example.com/event/realtime", "https://rt.example.com/event", "wss://rt.example.com/event/realtime",
                "rt.example.com"
            ),
            (
                "https://x.appsync-api.example.com/event", "https://x.appsync-api.example.com/event",
                "wss://x.appsync-api.example.com/event/realtime", "x.appsync-api.example.com"
            ),
            (
                "https://api.example.com:8443/event", "https://api.example.com:8443/event",
                "wss://api.example.com:8443/event/realtime", "api.example.com:8443"
            ),
            // Loopback may use plain HTTP / WS.
            ("http://127.0.0.1:8080/event", "http://127.0.0.1:8080/event", "ws://127.0.0.1:8080/event/realtime", "127.0.0.1:8080"),
            ("ws://localhost:9/event/realtime", "http://localhost:9/event", "ws://localhost:9/event/realtime", "localhost:9"),
            ("http://localhost/event", "http://localhost/event", "ws://localhost/event/realtime", "localhost"),
            ("ws://127.0.0.1:4000/event/realtime", "http://127.0.0.1:4000/event", "ws://127.0.0.1:4000/event/realtime", "127.0.0.1:4000"),
            // Loopback may use TLS too.
            ("https://localhost:8443/event", "https://localhost:8443/event", "wss://localhost:8443/event/realtime", "localhost:8443"),
            // Surrounding spaces are ignored.
            ("  \(awsHTTP) ", awsHTTP, awsRealtime, awsHost),
        ])
    func derive(input: String, http: String, realtime: String, host: String) throws {
        let endpoint = try AppSyncEndpoint(input)
        #expect(endpoint.httpURL.absoluteString == http)
        #expect(endpoint.realtimeURL.absoluteString == realtime)
        #expect(endpoint.host == host)
        #expect(endpoint.description == http)
    }

    @Test(
        "IPv6 loopback keeps its brackets",
        arguments: [
            ("http://[::1]:8080/event", "http://[::1]:8080/event", "ws://[::1]:8080/event/realtime"),
            ("ws://[::1]:8080/event/realtime", "http://[::1]:8080/event", "ws://[::1]:8080/event/realtime"),
        ])
    func ipv6Loopback(input: String, http: String, realtime: String) throws {
        // `URL.host` drops the brackets; the endpoint must put them back when it builds the other URL.
        let endpoint = try AppSyncEndpoint(input)
        #expect(endpoint.httpURL.absoluteString == http)
        #expect(endpoint.realtimeURL.absoluteString == realtime)
        #expect(endpoint.host == "[::1]:8080")
    }

    @Test(
        "either URL gives the same endpoint",
        arguments: [
            (awsHTTP, awsRealtime),
            ("https://api.example.com/event", "wss://api.example.com/event/realtime"),
            ("http://127.0.0.1:8080/event", "ws://127.0.0.1:8080/event/realtime"),
        ])
    func roundTrip(http: String, realtime: String) throws {
        let fromHTTP = try AppSyncEndpoint(httpURL: try #require(URL(string: http)))
        let fromRealtime = try AppSyncEndpoint(realtimeURL: try #require(URL(string: realtime)))
        #expect(fromHTTP.realtimeURL.absoluteString == realtime)
        #expect(fromRealtime.httpURL.absoluteString == http)
        #expect(fromHTTP.host == fromRealtime.host)
        // Deriving back from the derived URL reproduces the original.
        let back = try AppSyncEndpoint(realtimeURL: fromHTTP.realtimeURL)
        #expect(back.httpURL.absoluteString == http)
    }

    @Test(
        "trailing slash on the path is accepted",
        arguments: [
            "https://api.example.com/event/",
            "wss://api.example.com/event/realtime/",
        ])
    func trailingSlash(input: String) throws {
        let endpoint = try AppSyncEndpoint(input)
        #expect(endpoint.host == "api.example.com")
        #expect(endpoint.realtimeURL.path.hasPrefix("/event/realtime"))
    }

    @Test(
        "rejects unusable URLs",
        arguments: [
            "http://example.com/event",
            "ws://example.com/event/realtime",
            "http://10.0.0.1/event",
            "http://128.0.0.1/event",
            "https://api.example.com/events",
            "https://api.example.com/",
            "https://api.example.com",
            "https://api.example.com/event/realtime",
            "wss://api.example.com/event",
            "wss://api.example.com/realtime",
            "https://api.example.com/v1/event",
            "ftp://api.example.com/event",
            "file:///event",
            "mailto:x@example.com",
            "not a url",
            "",
            "api.example.com/event",
            "https:///event",
            "https://api.example.com/event?x=1",
            "https://user:pw@api.example.com/event",
            "https://api.example.com:70000/event",
            "https://api.example.com:0/event",
            "http://127.0.0.1:65536/event",
        ])
    func rejects(input: String) {
        let error = #expect(throws: RealtimeError.self) { try AppSyncEndpoint(input) }
        guard case .invalidEndpoint? = error else {
            Issue.record("expected invalidEndpoint, got \(String(describing: error))")
            return
        }
    }

    @Test func typedInitialisersRejectTheOtherScheme() throws {
        #expect(throws: RealtimeError.self) { try AppSyncEndpoint(httpURL: URL(string: awsRealtime)!) }
        #expect(throws: RealtimeError.self) { try AppSyncEndpoint(realtimeURL: URL(string: awsHTTP)!) }
    }

    @Test(
        "isLoopback",
        arguments: [
            ("localhost", true),
            ("LOCALHOST", true),
            ("127.0.0.1", true),
            ("127.1.2.3", true),
            ("::1", true),
            ("[::1]", true),
            ("example.com", false),
            ("128.0.0.1", false),
            ("10.0.0.1", false),
            ("0.0.0.0", false),
            ("localhost.example.com", false),
            ("mylocalhost", false),
            ("::2", false),
        ])
    func isLoopback(host: String, expected: Bool) {
        #expect(AppSyncEndpoint.isLoopback(host) == expected)
    }

    @Test(
        "host names that merely start with 127. are not loopback",
        arguments: [
            "127.example.com",
            "127.0.0.1.nip.io",
        ])
    func dnsNamesStartingWith127(host: String) {
        #expect(AppSyncEndpoint.isLoopback(host) == false)
        #expect(throws: RealtimeError.self) { try AppSyncEndpoint("http://\(host)/event") }
    }
}

@Suite("AppSyncAuthorizer")
struct AppSyncAuthorizerTests {
    static let endpoint = try! AppSyncEndpoint(awsHTTP)

    /// (bytes, standard base64, base64url)
    @Test(
        "base64URL replaces + and / and drops padding",
        arguments: [
            ([0xFB, 0xFF] as [UInt8], "+/8=", "-_8"),
            ([0xFB, 0xEF, 0xBE], "++++", "----"),
            ([0xFF, 0xFF, 0xFF], "////", "____"),
            ([0xFF], "/w==", "_w"),
            ([0xFA], "+g==", "-g"),
            ([0xFB, 0xF0], "+/A=", "-_A"),
            ([], "", ""),
            (Array("f".utf8), "Zg==", "Zg"),
            (Array("fo".utf8), "Zm8=", "Zm8"),
            (Array("foo".utf8), "Zm9v", "Zm9v"),
            (Array(#"{"host":"h"}"#.utf8), "eyJob3N0IjoiaCJ9", "eyJob3N0IjoiaCJ9"),
        ])
    func base64URL(bytes: [UInt8], standard: String, expected: String) throws {
        #expect(Data(bytes).base64EncodedString() == standard)
        let encoded = Base64URL.encode(Data(bytes))
        #expect(encoded == expected)
        #expect(!encoded.contains("+") && !encoded.contains("/") && !encoded.contains("="))
        #expect(Base64URL.decode(encoded) == Data(bytes))
        // Padded input decodes as well.
        let padded = encoded + String(repeating: "=", count: (4 - encoded.count % 4) % 4)
        #expect(Base64URL.decode(padded) == Data(bytes))
    }

    @Test("decodeBase64URL round-trips every length", arguments: 0..<40)
    func roundTrip(length: Int) {
        let bytes = Data((0..<length).map { UInt8(truncatingIfNeeded: $0 &* 97 &+ 251) })
        let encoded = Base64URL.encode(bytes)
        #expect(encoded.count == (length * 4 + 2) / 3)
        #expect(Base64URL.decode(encoded) == bytes)
    }

    @Test("decodeBase64URL rejects malformed text", arguments: ["a", "abcde", "!!!!", "a b c d", "Zm9v\u{0}", "Zm9v\u{e9}A"])
    func malformed(text: String) {
        #expect(Base64URL.decode(text) == nil)
    }

    @Test(
        "auth objects",
        arguments: [
            (
                AuthCredentials.apiKey("da2-key"), ["host": awsHost, "x-api-key": "da2-key"],
                #"{"host":"abc.appsync-api.us-east-1.amazonaws.com","x-api-key":"da2-key"}"#
            ),
            (
                .bearerToken("eyJ.jwt/+="), ["host": awsHost, "Authorization": "eyJ.jwt/+="],
                #"{"Authorization":"eyJ.jwt/+=","host":"abc.appsync-api.us-east-1.amazonaws.com"}"#
            ),
            (
                .lambdaToken("lambda-token"), ["host": awsHost, "Authorization": "lambda-token"],
                #"{"Authorization":"lambda-token","host":"abc.appsync-api.us-east-1.amazonaws.com"}"#
            ),
        ])
    func authObjects(credentials: AuthCredentials, expected: [String: String], json: String) throws {
        let authorizer = AppSyncAuthorizer(endpoint: Self.endpoint, credentials: credentials)
        #expect(authorizer.authorization(body: "{}") == expected)
        #expect(authorizer.authorization(body: #"{"channel":"default/test"}"#) == expected)
        #expect(authorizer.connectAuthorizationJSON() == json)
        let parsed = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: String]
        #expect(parsed == expected)
    }

    @Test func hostIsTheHTTPHostWhenBuiltFromTheRealtimeURL() throws {
        let endpoint = try AppSyncEndpoint(awsRealtime)
        let authorizer = AppSyncAuthorizer(endpoint: endpoint, credentials: .apiKey("k"))
        #expect(authorizer.authorization(body: "{}")["host"] == awsHost)
    }

    static let allCredentials: [AuthCredentials] = [
        .apiKey("da2-key"),
        .bearerToken("eyJhbGciOi.payload.sig"),
        .lambdaToken("custom-token/with+odd=chars"),
        .iam(AWSCredentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "secret", sessionToken: "session", region: "us-east-1")),
    ]

    @Test("headerSubprotocol carries exactly the sorted connect JSON", arguments: allCredentials)
    func headerSubprotocol(credentials: AuthCredentials) throws {
        let authorizer = AppSyncAuthorizer(
            endpoint: Self.endpoint, credentials: credentials, now: { Date(timeIntervalSince1970: 1_700_000_000) })
        let header = authorizer.headerSubprotocol()
        #expect(header.hasPrefix("header-"))
        let payload = String(header.dropFirst("header-".count))
        #expect(payload.unicodeScalars.allSatisfy { CharacterSet.alphanumerics.contains($0) || $0 == "-" || $0 == "_" })
        let decoded = try #require(Base64URL.decode(payload))
        let json = authorizer.connectAuthorizationJSON()
        #expect(decoded == Data(json.utf8))
        #expect(json == JSONString.sortedStringObject(authorizer.authorization(body: "{}")))
        // Sorted keys: the key order in the text is the sorted order.
        let object = try #require(try JSONSerialization.jsonObject(with: decoded) as? [String: String])
        #expect(object["host"] == awsHost)
        let keyOrder = object.keys.sorted().map { #""\#($0)":"# }
        let positions = keyOrder.compactMap { json.range(of: $0)?.lowerBound }
        #expect(positions.count == keyOrder.count)
        #expect(positions == positions.sorted())
        #expect(authorizer.subprotocols() == ["aws-appsync-event-ws", header])
    }

    /// (endpoint text, the `host` every auth object must carry: what an HTTP client sends as `Host`)
    static let hostForms: [(String, String)] = [
        (awsHTTP, awsHost),
        ("https://ABC.Appsync-Api.US-East-1.amazonaws.com/event", awsHost),
        ("https://abc.appsync-api.us-east-1.amazonaws.com:443/event", awsHost),
        ("https://ABC.APPSYNC-API.us-east-1.AMAZONAWS.COM:443/event", awsHost),
        ("wss://ABC.appsync-realtime-api.us-east-1.amazonaws.com:443/event/realtime", awsHost),
        ("https://API.Example.com:8443/event", "api.example.com:8443"),
        ("http://127.0.0.1:8787/event", "127.0.0.1:8787"),
        ("http://LOCALHOST:80/event", "localhost"),
        ("ws://[::1]:8080/event/realtime", "[::1]:8080"),
    ]

    @Test("every auth object carries the HTTP Host form: lowercase, the default port dropped", arguments: hostForms)
    func hostForm(text: String, host: String) throws {
        let endpoint = try AppSyncEndpoint(text)
        for credentials in Self.allCredentials {
            let authorizer = AppSyncAuthorizer(endpoint: endpoint, credentials: credentials)
            #expect(authorizer.host == host)
            #expect(authorizer.authorization(body: "{}")["host"] == host, "\(credentials)")
            #expect(authorizer.authorization(body: #"{"channel":"default/a"}"#)["host"] == host, "\(credentials)")
        }
    }

    @Test("IAM signs exactly the host it sends, whatever the letter case or port of the URL", arguments: hostForms)
    func iamSignsTheSentHost(text: String, host: String) throws {
        let aws = AWSCredentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "secret", sessionToken: "session", region: "us-east-1")
        let date = Date(timeIntervalSince1970: 1_700_000_000)
        let endpoint = try AppSyncEndpoint(text)
        let authorizer = AppSyncAuthorizer(endpoint: endpoint, credentials: .iam(aws), now: { date })
        let body = #"{"channel":"default/a"}"#
        let sent = authorizer.authorization(body: body)
        let sentHost = try #require(sent["host"])
        #expect(sentHost == host)
        // A server recomputes the signature from the headers it received: host taken verbatim from the object.
        var received = sent.filter { $0.key != "Authorization" && $0.key != "x-amz-date" && $0.key != "x-amz-security-token" }
        received["host"] = sentHost
        let recomputed = SigV4Signer(
            accessKeyID: aws.accessKeyID, secretAccessKey: aws.secretAccessKey, sessionToken: aws.sessionToken, region: aws.region
        ).signingDetails(method: "POST", url: endpoint.httpURL, headers: received, body: Data(body.utf8), date: date)
        #expect(recomputed.canonicalRequest.contains("\nhost:\(sentHost)\n"))
        #expect(sent["Authorization"] == recomputed.authorization)
        #expect(sent.keys.filter { $0.lowercased() == "host" }.count == 1, "one host, not two spellings")
    }
}
