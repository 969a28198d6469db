import Foundation
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

    /// Applies a JSON object whose keys are the settings' keys (``RealtimeSettingsTable``; the nested `liveness` and
    /// `failover` as objects); absent keys keep their current values. Unknown keys, keys of earlier versions and values
    /// of the wrong kind are errors naming `source` and the key (typos must not pass silently). Bounds are checked by
    /// ``validate()``.
    public func applyingJSON(_ data: Data, source: String = "JSON") throws(ConfigurationError) -> RealtimeConfiguration {
        guard let value = try? JSONDecoder().decode(JSONValue.self, from: data), case .object(let object) = value else {
            throw ConfigurationError(["\(source): not a JSON object"])
        }
        var configuration = self
        var problems: [String] = []
        configuration.apply(object, prefix: "", source: source, problems: &problems)
        guard problems.isEmpty else { throw ConfigurationError(problems) }
        return configuration
    }

    /// Applies the members of `object` (keys under `prefix`) through the table.
    private mutating func apply(_ object: [String: JSONValue], prefix: String, source: String, problems: inout [String]) {
        for (name, value) in object.sorted(by: { $0.key < $1.key }) {
            let key = prefix + name
            if let setting = RealtimeSettingsTable.setting(forKey: key) {
                switch setting.applyJSON(&self, value) {
                case nil: break
                case .expected(let expected)?: problems.append("\(source): \"\(key)\" has the wrong type or value (\(expected))")
                case .invalid(let faults)?: problems += faults.map { "\(source): \(key): \($0)" }
                }
            } else if prefix.isEmpty, RealtimeSettingsTable.groups.contains(key) {
                guard case .object(let nested) = value else {
                    problems.append("\(source): \"\(key)\" has the wrong type or value (expected an object)")
                    continue
                }
                apply(nested, prefix: key + ".", source: source, problems: &problems)
            } else if let old = RealtimeSettingsTable.replaced.first(where: { $0.key == key }) {
                problems.append("\(source): \"\(key)\" was replaced by \"\(old.replacement)\" (\(old.note))")
            } else {
                problems.append("\(source): unknown key \"\(key)\"")
            }
        }
    }

    /// Applies the `VORTEX_REALTIME_*` variables of ``RealtimeSettingsTable`` (blank ones are ignored). A value that
    /// is not of its setting's kind, a variable of an earlier version and an unknown `VORTEX_REALTIME_*` variable are
    /// errors naming the variable (the value too, unless it may be secret). Bounds are checked by ``validate()``.
    public func applyingEnvironment(_ environment: [String: String]) throws(ConfigurationError) -> RealtimeConfiguration {
        var configuration = self
        var problems: [String] = []
        for (name, raw) in environment.sorted(by: { $0.key < $1.key }) where name.hasPrefix(RealtimeSettingsTable.environmentPrefix) {
            let text = raw.trimmingCharacters(in: .whitespaces)
            guard !text.isEmpty else { continue }
            if let setting = RealtimeSettingsTable.setting(forEnvironmentVariable: name) {
                switch setting.applyText(&configuration, text) {
                case nil: break
                case .expected(let expected)?: problems.append(setting.hidesValue ? "\(name): \(expected)" : "\(name)=\(text): \(expected)")
                // Named by the variable; the value is not echoed (a template should hold no secret, but may).
                case .invalid(let faults)?: problems += faults.map { "\(name): \($0)" }
                }
            } else if let old = RealtimeSettingsTable.replaced.first(where: { $0.environmentVariable == name }) {
                problems.append("\(name): replaced by \(old.replacementVariable) (\(old.note))")
            } else {
                problems.append("\(name): unknown variable (the variables are listed in docs/configuration.md)")
            }
        }
        guard problems.isEmpty else { throw ConfigurationError(problems) }
        return configuration
    }

    /// Checks every setting against its declaration in ``RealtimeSettingsTable`` (bounds, the reconnect policy, the
    /// endpoints that are set, the template, the operations), then what settings require of each other (the endpoints a
    /// transport or failover needs, the API key and ``authMode``); reports every problem at once, each naming its key.
    public func validate() throws(ConfigurationError) {
        var problems = RealtimeSettingsTable.settings.flatMap { $0.validate(self) }
        let needsAppSync = transport == .appsync || failover.enabled
        let needsGraphQL = transport == .graphql || failover.enabled
        if needsAppSync && appSyncEndpoint == nil {
            problems.append(
                failover.enabled && transport == .graphql
                    ? "appSyncEndpoint: required because failover is on (it fails over to appsync)"
                    : "appSyncEndpoint: required for transport appsync")
        }
        if needsGraphQL && graphQLEndpoint == nil {
            problems.append(
                failover.enabled && transport == .appsync
                    ? "graphQLEndpoint: required because failover is on (it fails over to graphql)"
                    : "graphQLEndpoint: required for transport graphql")
        }
        if authMode == .apiKey && (apiKey ?? "").isEmpty { problems.append("apiKey: required when authMode is apiKey") }
        if authMode == .session && apiKey != nil {
            problems.append("apiKey: given, but authMode is session (set authMode to apiKey or remove the key)")
        }
        guard problems.isEmpty else { throw ConfigurationError(problems) }
    }
}
