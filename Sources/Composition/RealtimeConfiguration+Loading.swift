import AppSyncEventsTransport
import BackendNotifier
import Foundation
import GraphQLTransport
import SubscriberCore

/// Why a configuration was refused.
public struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Every problem found, each naming the key (and its environment variable where it came from).
    public var problems: [String]
    /// Creates the error.
    public init(_ problems: [String]) { self.problems = problems }
    public var description: String { "invalid real-time configuration: " + problems.joined(separator: "; ") }
}

extension RealtimeConfiguration {
    /// Layers the sources: `base` (code), then the JSON file if given, then the environment; then validates.
    public static func load(
        base: RealtimeConfiguration = RealtimeConfiguration(), file: String? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(ConfigurationError) -> RealtimeConfiguration {
        var configuration = base
        if let file { configuration = try configuration.applyingFile(file) }
        configuration = try configuration.applyingEnvironment(environment)
        try configuration.validate()
        return configuration
    }

    /// Decodes a JSON file whose keys are the property names; absent keys keep their current values.
    public func applyingFile(_ path: String) throws(ConfigurationError) -> RealtimeConfiguration {
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw ConfigurationError(["file \(path): cannot be read (\(error.localizedDescription))"])
        }
        return try applyingJSON(data, source: "file \(path)")
    }

    /// Applies a JSON object whose keys are the property names; unknown keys are errors (typos must not pass silently).
    public func applyingJSON(_ data: Data, source: String = "JSON") throws(ConfigurationError) -> RealtimeConfiguration {
        guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            throw ConfigurationError(["\(source): not a JSON object"])
        }
        let known = Set(CodingKeys.allCases.map(\.rawValue))
        let unknown = object.keys.filter { !known.contains($0) }.sorted()
        guard unknown.isEmpty else {
            throw ConfigurationError(
                unknown.map { key in
                    Self.renamedKeys[key].map { "\(source): \"\(key)\" was replaced by \"\($0)\" (for both transports)" }
                        ?? "\(source): unknown key \"\(key)\""
                })
        }
        // Merge over the current values so absent keys keep them, then decode the whole.
        var merged = (try? JSONSerialization.jsonObject(with: JSONEncoder().encode(self))) as? [String: Any] ?? [:]
        let nestedKeys: [String: Set<String>] = [
            "failover": Set(FailoverConfiguration.CodingKeys.allCases.map(\.rawValue)),
            "liveness": Set(LivenessConfiguration.CodingKeys.allCases.map(\.rawValue)),
        ]
        for (key, value) in object {
            if let knownNested = nestedKeys[key], let nested = value as? [String: Any], var current = merged[key] as? [String: Any] {
                if let bad = nested.keys.sorted().first(where: { !knownNested.contains($0) }) {
                    throw ConfigurationError(["\(source): unknown key \"\(key).\(bad)\""])
                }
                current.merge(nested) { $1 }
                merged[key] = current
            } else if key == CodingKeys.graphQLConnectionPayload.rawValue, value is [String: Any] {
                // The template may be written as the object itself; it is kept as JSON text.
                let text = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .withoutEscapingSlashes])
                merged[key] = text.map { String(decoding: $0, as: UTF8.self) }
            } else {
                merged[key] = value
            }
        }
        let decoded: RealtimeConfiguration
        do {
            let data = try JSONSerialization.data(withJSONObject: merged)
            decoded = try JSONDecoder().decode(RealtimeConfiguration.self, from: data)
        } catch let DecodingError.typeMismatch(_, context), let DecodingError.dataCorrupted(context) {
            let key = context.codingPath.map(\.stringValue).joined(separator: ".")
            throw ConfigurationError(["\(source): \"\(key)\" has the wrong type or value (\(context.debugDescription))"])
        } catch {
            throw ConfigurationError(["\(source): \(error)"])
        }
        // A bad connection_init template is named with its source at once (validate() names the key again later).
        if object[CodingKeys.graphQLConnectionPayload.rawValue] != nil {
            do { _ = try decoded.connectionPayloadTemplate() } catch { throw ConfigurationError(error.problems.map { "\(source): \($0)" }) }
        }
        return decoded
    }

    /// Keys of earlier versions and what replaced them: named in the error, so a renamed key is not a mystery.
    static let renamedKeys = [
        "graphQLPingIntervalSeconds": "liveness.quietPeriodSeconds",
        "graphQLPongTimeoutSeconds": "liveness.pongTimeoutSeconds",
    ]

    /// Applies `VORTEX_REALTIME_*` variables.
    public func applyingEnvironment(_ environment: [String: String]) throws(ConfigurationError) -> RealtimeConfiguration {
        var configuration = self
        var problems: [String] = []
        func value(_ name: String) -> String? {
            guard let text = environment[name]?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return nil }
            return text
        }
        func number(_ name: String) -> Double? {
            guard let text = value(name) else { return nil }
            guard let number = Double(text), number >= 0, number.isFinite else {
                problems.append("\(name)=\(text): not a non-negative number")
                return nil
            }
            return number
        }
        if let text = value("VORTEX_REALTIME_TRANSPORT") {
            if let kind = TransportKind(rawValue: text.lowercased()) {
                configuration.transport = kind
            } else {
                problems.append("VORTEX_REALTIME_TRANSPORT=\(text): expected appsync or graphql")
            }
        }
        if let text = value("VORTEX_REALTIME_APPSYNC_ENDPOINT") { configuration.appSyncEndpoint = text }
        if let text = value("VORTEX_REALTIME_GRAPHQL_ENDPOINT") { configuration.graphQLEndpoint = text }
        if let text = value("VORTEX_REALTIME_AUTH_MODE") {
            if let mode = AuthMode(rawValue: text) {
                configuration.authMode = mode
            } else {
                problems.append("VORTEX_REALTIME_AUTH_MODE=\(text): expected session or apiKey")
            }
        }
        if let text = value("VORTEX_REALTIME_API_KEY") { configuration.apiKey = text }
        if let text = value("VORTEX_REALTIME_RECONNECT") { configuration.reconnect = text }
        if let seconds = number("VORTEX_REALTIME_ACK_TIMEOUT") { configuration.ackTimeoutSeconds = seconds }
        if let seconds = number("VORTEX_REALTIME_MAX_CONNECTION_DURATION") {
            configuration.maxConnectionDurationSeconds = seconds == 0 ? nil : seconds
        }
        for (old, new) in [
            ("VORTEX_REALTIME_GRAPHQL_PING_INTERVAL", "VORTEX_REALTIME_QUIET_PERIOD"),
            ("VORTEX_REALTIME_GRAPHQL_PONG_TIMEOUT", "VORTEX_REALTIME_PONG_TIMEOUT"),
        ] where value(old) != nil {
            problems.append("\(old): replaced by \(new) (for both transports)")
        }
        if let seconds = number("VORTEX_REALTIME_QUIET_PERIOD") { configuration.liveness.quietPeriodSeconds = seconds == 0 ? nil : seconds }
        if let seconds = number("VORTEX_REALTIME_PONG_TIMEOUT") { configuration.liveness.pongTimeoutSeconds = seconds }
        if let seconds = number("VORTEX_REALTIME_PROBE_TIMEOUT") { configuration.liveness.probeTimeoutSeconds = seconds }
        if let text = value("VORTEX_REALTIME_WEBSOCKET_PINGS") {
            switch text.lowercased() {
            case "on", "true", "1": configuration.liveness.webSocketPings = true
            case "off", "false", "0": configuration.liveness.webSocketPings = false
            default: problems.append("VORTEX_REALTIME_WEBSOCKET_PINGS=\(text): expected on or off")
            }
        }
        if let limit = number("VORTEX_REALTIME_BUFFER_LIMIT") { configuration.bufferLimit = Int(limit) }
        if let text = value("VORTEX_REALTIME_BUFFER_OVERFLOW") {
            if let overflow = ObserverBufferPolicy.Overflow(rawValue: text) {
                configuration.bufferOverflow = overflow
            } else {
                problems.append("VORTEX_REALTIME_BUFFER_OVERFLOW=\(text): expected dropOldest or dropNewest")
            }
        }
        if let seconds = number("VORTEX_REALTIME_BACKGROUND_GRACE") { configuration.backgroundGraceSeconds = seconds }
        if let seconds = number("VORTEX_REALTIME_SWITCH_TIMEOUT") { configuration.switchTimeoutSeconds = seconds }
        if let seconds = number("VORTEX_REALTIME_NETWORK_ERROR_AFTER") { configuration.networkErrorAfterSeconds = seconds }
        if let text = value("VORTEX_REALTIME_GRAPHQL_CONNECTION_PAYLOAD") {
            // Checked here to name the variable; the value is not echoed (a template should hold no secret, but may).
            do { _ = try ConnectionPayloadTemplate(text) } catch {
                problems += error.problems.map { "VORTEX_REALTIME_GRAPHQL_CONNECTION_PAYLOAD: \($0)" }
            }
            configuration.graphQLConnectionPayload = text
        }
        if let text = value("VORTEX_REALTIME_FAILOVER") {
            switch text.lowercased() {
            case "on", "true", "1": configuration.failover.enabled = true
            case "off", "false", "0": configuration.failover.enabled = false
            default: problems.append("VORTEX_REALTIME_FAILOVER=\(text): expected on or off")
            }
        }
        if let seconds = number("VORTEX_REALTIME_FAILOVER_UNHEALTHY_AFTER") { configuration.failover.unhealthyAfterSeconds = seconds }
        if let count = number("VORTEX_REALTIME_FAILOVER_MAX_FAILURES") { configuration.failover.maxFailures = Int(count) }
        if let seconds = number("VORTEX_REALTIME_FAILOVER_WINDOW") { configuration.failover.failureWindowSeconds = seconds }
        if let seconds = number("VORTEX_REALTIME_FAILBACK_AFTER") { configuration.failover.failbackAfterSeconds = seconds }
        guard problems.isEmpty else { throw ConfigurationError(problems) }
        return configuration
    }

    /// Checks for missing and contradictory values, reporting all of them at once.
    public func validate() throws(ConfigurationError) {
        var problems: [String] = []
        let needsAppSync = transport == .appsync || failover.enabled
        let needsGraphQL = transport == .graphql || failover.enabled
        if needsAppSync {
            if let appSyncEndpoint {
                do { _ = try AppSyncEndpoint(appSyncEndpoint) } catch { problems.append("appSyncEndpoint: \(error)") }
            } else {
                problems.append(
                    failover.enabled && transport == .graphql
                        ? "appSyncEndpoint: required because failover is on (it fails over to appsync)"
                        : "appSyncEndpoint: required for transport appsync")
            }
        }
        if needsGraphQL {
            if let graphQLEndpoint {
                do { _ = try GraphQLTransportConfiguration(graphQLEndpoint) } catch { problems.append("graphQLEndpoint: \(error)") }
            } else {
                problems.append(
                    failover.enabled && transport == .appsync
                        ? "graphQLEndpoint: required because failover is on (it fails over to graphql)"
                        : "graphQLEndpoint: required for transport graphql")
            }
        }
        if authMode == .apiKey && (apiKey ?? "").isEmpty { problems.append("apiKey: required when authMode is apiKey") }
        if authMode == .session && apiKey != nil {
            problems.append("apiKey: given, but authMode is session (set authMode to apiKey or remove the key)")
        }
        do { _ = try reconnectPolicy } catch { problems += error.problems }
        if ackTimeoutSeconds <= 0 { problems.append("ackTimeoutSeconds: must be positive") }
        // A day at most, as for every other duration: the conversion to milliseconds cannot overflow.
        func checkSeconds(_ value: Double?, _ key: String, allowNil: String = "") {
            guard let value else { return }
            if !(value > 0 && value <= 86_400) { problems.append("\(key): must be above 0 and at most 86400\(allowNil)") }
        }
        checkSeconds(liveness.quietPeriodSeconds, "liveness.quietPeriodSeconds", allowNil: " (or null: never ping)")
        checkSeconds(liveness.pongTimeoutSeconds, "liveness.pongTimeoutSeconds")
        checkSeconds(liveness.probeTimeoutSeconds, "liveness.probeTimeoutSeconds")
        if let duration = maxConnectionDurationSeconds, duration < 60 { problems.append("maxConnectionDurationSeconds: at least 60") }
        if bufferLimit < 1 { problems.append("bufferLimit: at least 1") }
        if switchTimeoutSeconds <= 0 { problems.append("switchTimeoutSeconds: must be positive") }
        if networkErrorAfterSeconds <= 0 { problems.append("networkErrorAfterSeconds: must be positive") }
        for (key, operation) in (graphQLOperations ?? [:]).sorted(by: { $0.key < $1.key }) {
            if NotifierUpstream(rawValue: key) == nil {
                problems.append(
                    "graphQLOperations.\(key): unknown upstream (expected \(NotifierUpstream.allCases.map(\.rawValue).joined(separator: ", ")))"
                )
            }
            if !operation.query.contains("subscription") { problems.append("graphQLOperations.\(key): query must be a subscription") }
        }
        do { _ = try connectionPayloadTemplate() } catch { problems += error.problems }
        if failover.enabled {
            if failover.unhealthyAfterSeconds <= 0 { problems.append("failover.unhealthyAfterSeconds: must be positive") }
            if failover.maxFailures < 1 { problems.append("failover.maxFailures: at least 1") }
            if failover.failbackAfterSeconds <= 0 { problems.append("failover.failbackAfterSeconds: must be positive") }
        }
        guard problems.isEmpty else { throw ConfigurationError(problems) }
    }
}
