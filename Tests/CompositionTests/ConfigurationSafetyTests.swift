import Foundation
import RealtimeTesting
import SubscriberCore
import Testing

@testable import Composition

/// A configuration built in code is checked where it is converted, and never shows its secrets.
@Suite("RealtimeConfiguration: checked conversions and redacted descriptions")
struct ConfigurationSafetyTests {
    static func configuration() -> RealtimeConfiguration {
        var configuration = RealtimeConfiguration()
        configuration.appSyncEndpoint = "https://abc.appsync-api.us-east-1.amazonaws.com/event"
        configuration.graphQLEndpoint = "wss://api.example.com/graphql"
        return configuration
    }

    @Test(
        "a number of seconds out of its bounds built in code (NaN, an infinity) is a ConfigurationError where it is converted, not a trap",
        arguments: [Double.nan, .infinity, -.infinity])
    func nonFiniteSecondsThrow(value: Double) throws {
        var ack = Self.configuration()
        ack.ackTimeoutSeconds = value
        var pong = Self.configuration()
        pong.liveness.pongTimeoutSeconds = value
        var rotation = Self.configuration()
        rotation.maxConnectionDurationSeconds = value
        for configuration in [ack, pong, rotation] {
            let factory = TransportFactory(configuration: configuration, auth: ScriptedAuthSession(.bearerToken("jwt")))
            for kind in RealtimeConfiguration.TransportKind.allCases {
                #expect(throws: ConfigurationError.self) { _ = try factory.make(kind) }
            }
        }
        #expect(throws: ConfigurationError.self) { _ = try ack.linkSettings }
        #expect(throws: ConfigurationError.self) { _ = try pong.linkSettings }
        let error = #expect(throws: ConfigurationError.self) { _ = try pong.liveness.settings }
        #expect(error?.problems.first?.hasPrefix("liveness.pongTimeoutSeconds:") == true, "\(String(describing: error))")
    }

    @Test("description, String(reflecting:) and dump redact the API key and the connection payload template")
    func descriptionRedactsSecrets() {
        var configuration = Self.configuration()
        configuration.authMode = .apiKey
        configuration.apiKey = "da2-secretkey123"
        configuration.graphQLConnectionPayload = #"{"x-api-key":"da2-literalsecret456"}"#
        var dumped = ""
        dump(configuration, to: &dumped)
        for text in ["\(configuration)", String(describing: configuration), String(reflecting: configuration), dumped] {
            #expect(!text.contains("secretkey123") && !text.contains("literalsecret456"), "\(text)")
            #expect(text.contains("<redacted>"), "\(text)")
            #expect(text.contains("api.example.com"), "the other settings are shown: \(text)")
        }
        #expect(!"\(Self.configuration())".contains("<redacted>"), "no secret set: nothing to redact")
    }
}
