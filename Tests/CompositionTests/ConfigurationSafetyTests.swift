import BackendNotifier
import Foundation
import RealtimeTesting
import SubscriberCore
import Testing

@testable import Composition

/// A configuration built in code is checked where it is converted (never a trap, whatever a number holds), and never
/// shows its secrets.
@Suite("RealtimeConfiguration: checked conversions and redacted descriptions")
struct ConfigurationSafetyTests {
    static func configuration() -> RealtimeConfiguration {
        var configuration = RealtimeConfiguration()
        configuration.appSyncEndpoint = "https://abc.appsync-api.us-east-1.amazonaws.com/event"
        configuration.graphQLEndpoint = "wss://api.example.com/graphql"
        return configuration
    }

    /// The keys of the settings given in seconds (the table's, so a new one is covered).
    static let secondsKeys = RealtimeSettingsTable.settings.filter { setting in
        switch setting.kind {
        case .seconds, .optionalSeconds: true
        default: false
        }
    }.map(\.key)

    /// Values an app may set in code that no number of seconds within bounds is; each would trap in `Duration` or
    /// `Int64` unconverted (or, negative, be a nonsense delay).
    static let outOfBounds: [Double] = [.nan, .infinity, -.infinity, 1e300, -1]

    /// The configuration with `value` set on the setting `key` (a number of seconds).
    static func configuration(setting key: String, to value: Double) throws -> RealtimeConfiguration {
        let setting = try #require(RealtimeSettingsTable.setting(forKey: key))
        var configuration = Self.configuration()
        if let path = setting.path as? WritableKeyPath<RealtimeConfiguration, Double> {
            configuration[keyPath: path] = value
        } else {
            configuration[keyPath: try #require(setting.path as? WritableKeyPath<RealtimeConfiguration, Double?>)] = value
        }
        return configuration
    }

    /// The number of seconds of `setting` in `configuration`.
    static func seconds(of setting: RealtimeSetting, in configuration: RealtimeConfiguration) throws -> Double {
        if let path = setting.path as? KeyPath<RealtimeConfiguration, Double> { return configuration[keyPath: path] }
        let path = try #require(setting.path as? KeyPath<RealtimeConfiguration, Double?>)
        return try #require(configuration[keyPath: path])
    }

    @Test(
        "a number of seconds out of its bounds set in code: reading the converting properties does not trap, and the notifier gets it clamped into its bounds (NaN: the default)",
        arguments: secondsKeys, outOfBounds)
    func convertingPropertiesDoNotTrap(key: String, value: Double) throws {
        let setting = try #require(RealtimeSettingsTable.setting(forKey: key))
        let configuration = try Self.configuration(setting: key, to: value)
        let notifier = configuration.notifierConfiguration
        _ = try? configuration.linkSettings
        _ = try? configuration.liveness.settings
        #expect("\(configuration)".contains(key))

        let bounds = try #require(setting.bounds)
        let upper = try #require(bounds.upper, "a finite upper bound is what keeps the clamped value a Duration")
        let clamped = configuration.clampedIntoBounds
        #expect(RealtimeSettingsTable.settings.flatMap { $0.validate(clamped) }.isEmpty, "clamped into the bounds, alone")
        let expected =
            switch value {
            case _ where value.isNaN: try Self.seconds(of: setting, in: RealtimeConfiguration())
            case _ where value > upper: upper
            default: bounds.includesLower ? bounds.lower : bounds.lower.nextUp
            }
        #expect(try Self.seconds(of: setting, in: clamped) == expected)
        let converted: [String: Duration] = [
            "backgroundGraceSeconds": notifier.backgroundGrace, "switchTimeoutSeconds": notifier.switchTimeout,
            "switchSettleSeconds": notifier.switchSettle, "networkErrorAfterSeconds": notifier.networkErrorAfter,
        ]
        if let duration = converted[key] { #expect(duration == .seconds(expected)) }
    }

    @Test(
        "a number of seconds out of its bounds set in code: validate(), the stack and the factory throw a ConfigurationError naming the setting",
        arguments: secondsKeys, outOfBounds)
    func entryPointsThrowNamingTheSetting(key: String, value: Double) throws {
        let configuration = try Self.configuration(setting: key, to: value)
        func names(_ error: ConfigurationError?) -> Bool { error?.problems.contains { $0.hasPrefix("\(key):") } == true }
        let auth = ScriptedAuthSession(.bearerToken("jwt"))
        let validated = #expect(throws: ConfigurationError.self) { try configuration.validate() }
        #expect(names(validated), "\(String(describing: validated))")
        let stack = #expect(throws: ConfigurationError.self) {
            _ = try RealtimeStack(
                configuration: configuration, auth: auth, userId: "u-1", organizationId: nil, connector: ScriptedWebSocketServer(),
                networkPathMonitor: nil)
        }
        #expect(names(stack), "\(String(describing: stack))")
        let factory = TransportFactory(configuration: configuration, auth: auth, connector: ScriptedWebSocketServer())
        for kind in RealtimeConfiguration.TransportKind.allCases {
            let made = #expect(throws: ConfigurationError.self) { _ = try factory.make(kind) }
            #expect(names(made), "\(kind): \(String(describing: made))")
        }
        let appSync = #expect(throws: ConfigurationError.self) { _ = try factory.makeAppSync() }
        #expect(names(appSync), "\(String(describing: appSync))")
        if key == "ackTimeoutSeconds" || key.hasPrefix("liveness.") {
            let link = #expect(throws: ConfigurationError.self) { _ = try configuration.linkSettings }
            #expect(names(link), "\(String(describing: link))")
        }
        if key.hasPrefix("liveness.") {
            let liveness = #expect(throws: ConfigurationError.self) { _ = try configuration.liveness.settings }
            #expect(names(liveness), "\(String(describing: liveness))")
        }
    }

    @Test("a number within its bounds reaches the notifier unchanged, at either bound too")
    func inBoundsValuesAreKept() throws {
        var configuration = Self.configuration()
        configuration.backgroundGraceSeconds = 0
        configuration.switchTimeoutSeconds = 86_400
        configuration.switchSettleSeconds = 1.25
        configuration.networkErrorAfterSeconds = 0.001
        configuration.bufferLimit = 1
        try configuration.validate()
        #expect(configuration.clampedIntoBounds == configuration)
        let notifier = configuration.notifierConfiguration
        #expect(notifier.backgroundGrace == .zero)
        #expect(notifier.switchTimeout == .seconds(86_400))
        #expect(notifier.switchSettle == .milliseconds(1250))
        #expect(notifier.networkErrorAfter == .milliseconds(1))
        #expect(notifier.bufferPolicy.limit == 1)
    }

    @Test("a whole number below its minimum set in code is clamped for the notifier and reported by validate()")
    func integersAreClamped() {
        var configuration = Self.configuration()
        configuration.bufferLimit = .min
        configuration.failover.maxFailures = -3
        #expect(configuration.notifierConfiguration.bufferPolicy.limit == 1)
        #expect(configuration.clampedIntoBounds.bufferLimit == 1)
        #expect(configuration.clampedIntoBounds.failover.maxFailures == 1)
        let error = #expect(throws: ConfigurationError.self) { try configuration.validate() }
        #expect(error?.problems.map { String($0.prefix { $0 != ":" }) } == ["bufferLimit", "failover.maxFailures"])
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
