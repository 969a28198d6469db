import BackendNotifier
import Foundation
import SubscriberCore

/// One setting of ``RealtimeConfiguration``, declared once in ``RealtimeSettingsTable``: its key (the JSON path), its
/// environment variable, the kind of value, the bounds it must keep and the line that documents it. Applying a file or
/// the environment, ``RealtimeConfiguration/validate()`` and the reference in `docs/configuration.md` all read it.
///
/// A setting reaches its property through a key path, so reading and writing the value is the same for every setting
/// of a kind; the closures below are that code, typed once per kind.
package struct RealtimeSetting: Sendable {
    /// What a setting's value is: it fixes how a file and the environment write it, and what is checked.
    package enum Kind: Sendable, Equatable {
        /// Free text (in a file a string or `null`).
        case text
        /// An endpoint URL (in a file a string or `null`), checked by the transport that uses it.
        case url
        /// One of these names (case-insensitive in the environment).
        case choice([String])
        /// A number of seconds.
        case seconds
        /// A number of seconds, or none: `null` in a file, `0` in the environment. `never` says what none means.
        case optionalSeconds(never: String)
        /// A whole number.
        case integer
        /// `true`/`false` in a file; `on`/`off` (or `true`/`false`, `1`/`0`) in the environment.
        case onOff
        /// A reconnect policy text (`ReconnectPolicy/init(validating:)`).
        case reconnectPolicy
        /// A JSON object template (``RealtimeConfiguration/ConnectionPayloadTemplate``): in a file the object itself or
        /// its text; in the environment its text.
        case jsonTemplate
        /// GraphQL operations per upstream: a file (or code) only.
        case operations
    }

    /// The range a number must keep.
    package struct Bounds: Sendable, Equatable, CustomStringConvertible {
        /// The lower bound.
        package var lower: Double
        /// Whether ``lower`` itself is allowed (`at least`) or not (`above`).
        package var includesLower: Bool
        /// The upper bound (allowed), if any.
        package var upper: Double?

        /// A duration: above 0 and at most a day (the conversion to milliseconds cannot overflow).
        package static let duration = Bounds(lower: 0, includesLower: false, upper: 86_400)

        /// Whether `value` is within the bounds.
        package func contains(_ value: Double) -> Bool {
            guard value.isFinite, includesLower ? value >= lower : value > lower else { return false }
            return upper.map { value <= $0 } ?? true
        }

        /// `value` moved into the bounds: `NaN` to `fallback` (a default within them), a value below them to the least
        /// they allow (just above an excluded ``lower``), one above them to ``upper``. Within them it is unchanged.
        func clamp(_ value: Double, nanTo fallback: Double) -> Double {
            guard !value.isNaN else { return fallback }
            return min(max(value, includesLower ? lower : lower.nextUp), upper ?? .greatestFiniteMagnitude)
        }

        /// The rule as the problems state it: "must be above 0 and at most 86400", "at least 1".
        package var description: String {
            let lowerText = includesLower ? "at least \(RealtimeSetting.format(lower))" : "must be above \(RealtimeSetting.format(lower))"
            return upper.map { "\(lowerText) and at most \(RealtimeSetting.format($0))" } ?? lowerText
        }
    }

    /// Why a value given in a file or the environment was refused.
    enum ValueProblem: Error {
        /// Not a value of the kind; the text says what was expected.
        case expected(String)
        /// A value of the kind with faults, each described.
        case invalid([String])
    }

    /// The key: the property name, `group.property` for the nested ones (the JSON path in a file).
    package let key: String
    /// The environment variable; `nil` for a setting given in a file or code only.
    package let environmentVariable: String?
    /// The kind of value.
    package let kind: Kind
    /// The range a number must keep (checked by ``RealtimeConfiguration/validate()``), if any.
    package let bounds: Bounds?
    /// What the setting does: the "effect" column of the reference (without the kind's own rules, which are added).
    package let doc: String
    /// The default as the reference shows it when it is not simply the value (a default that depends on something).
    package let defaultNote: String?
    /// Whether the value is kept out of error messages (a key, a template that may hold one).
    package let hidesValue: Bool
    /// The property the setting reads and writes.
    let path: any PartialKeyPath<RealtimeConfiguration> & Sendable

    /// Sets the value from environment text.
    let applyText: @Sendable (inout RealtimeConfiguration, String) -> ValueProblem?
    /// Sets the value from a file's JSON value.
    let applyJSON: @Sendable (inout RealtimeConfiguration, JSONValue) -> ValueProblem?
    /// The rule violations of the value in a configuration, each a whole problem naming the key.
    let problems: @Sendable (RealtimeConfiguration) -> [String]
    /// The value as the reference shows it; `nil` for none.
    let render: @Sendable (RealtimeConfiguration) -> String?
    /// Moves the value into ``bounds`` (a number's; anything else is left as it is): see
    /// ``RealtimeConfiguration/clampedIntoBounds``.
    let clampIntoBounds: @Sendable (inout RealtimeConfiguration) -> Void

    /// The default as the reference shows it: ``defaultNote``, or the value in `RealtimeConfiguration()` in code
    /// format, or `—` for none.
    package var defaultText: String {
        if let defaultNote { return defaultNote }
        return render(RealtimeConfiguration()).map { "`\($0)`" } ?? "—"
    }

    /// The problems ``RealtimeConfiguration/validate()`` reports for this setting in `configuration`.
    package func validate(_ configuration: RealtimeConfiguration) -> [String] { problems(configuration) }

    /// A number as the reference and the problems write it: `15`, `2.5`.
    static func format(_ number: Double) -> String {
        if number.rounded() == number, let whole = Int64(exactly: number) { return String(whole) }
        return String(number)
    }
}

// MARK: - Declaring settings

extension RealtimeSetting {
    /// The typed core every kind below is made of.
    static func make<Value: Sendable>(
        _ key: String, _ path: any WritableKeyPath<RealtimeConfiguration, Value> & Sendable, environment: String?, kind: Kind,
        bounds: Bounds? = nil, defaultNote: String? = nil, hidesValue: Bool = false, doc: String,
        text: @escaping @Sendable (String) -> Result<Value, ValueProblem>,
        json: @escaping @Sendable (JSONValue) -> Result<Value, ValueProblem>,
        check: @escaping @Sendable (Value) -> [String] = { _ in [] },
        clamp: @escaping @Sendable (Value) -> Value = { $0 },
        render: @escaping @Sendable (Value) -> String?
    ) -> RealtimeSetting {
        @Sendable func apply(_ result: Result<Value, ValueProblem>, to configuration: inout RealtimeConfiguration) -> ValueProblem? {
            switch result {
            case .success(let value):
                configuration[keyPath: path] = value
                return nil
            case .failure(let problem):
                return problem
            }
        }
        return RealtimeSetting(
            key: key, environmentVariable: environment, kind: kind, bounds: bounds, doc: doc, defaultNote: defaultNote,
            hidesValue: hidesValue, path: path,
            applyText: { configuration, value in apply(text(value), to: &configuration) },
            applyJSON: { configuration, value in apply(json(value), to: &configuration) },
            problems: { configuration in check(configuration[keyPath: path]) },
            render: { configuration in render(configuration[keyPath: path]) },
            clampIntoBounds: { configuration in configuration[keyPath: path] = clamp(configuration[keyPath: path]) })
    }

    /// A number of seconds within `bounds`.
    static func seconds(
        _ key: String, _ path: any WritableKeyPath<RealtimeConfiguration, Double> & Sendable, environment: String,
        bounds: Bounds = .duration, doc: String
    ) -> RealtimeSetting {
        let fallback = RealtimeConfiguration()[keyPath: path]
        return make(
            key, path, environment: environment, kind: .seconds, bounds: bounds, doc: doc, text: nonNegativeNumber,
            json: { value in number(value).map { .success($0) } ?? .failure(.expected("expected a number of seconds")) },
            check: { value in bounds.contains(value) ? [] : ["\(key): \(bounds)"] }, clamp: { bounds.clamp($0, nanTo: fallback) },
            render: { format($0) })
    }

    /// A number of seconds within `bounds`, or none (`null` in a file, `0` in the environment), meaning `never`.
    static func optionalSeconds(
        _ key: String, _ path: any WritableKeyPath<RealtimeConfiguration, Double?> & Sendable, environment: String,
        bounds: Bounds = .duration, never: String, doc: String
    ) -> RealtimeSetting {
        // NaN goes to the default; with none, to the upper bound (a number of seconds has one: `Duration` needs it).
        let fallback = RealtimeConfiguration()[keyPath: path] ?? bounds.upper ?? bounds.lower
        return make(
            key, path, environment: environment, kind: .optionalSeconds(never: never), bounds: bounds, doc: doc,
            text: { text in nonNegativeNumber(text).map { $0 == 0 ? nil : $0 } },
            json: { value in
                if value == .null { return .success(nil) }
                return number(value).map { .success($0) } ?? .failure(.expected("expected a number of seconds or null"))
            },
            check: { value in value.map { bounds.contains($0) ? [] : ["\(key): \(bounds) (or null: \(never))"] } ?? [] },
            clamp: { value in value.map { bounds.clamp($0, nanTo: fallback) } }, render: { $0.map(format) })
    }

    /// A whole number of at least `minimum`.
    static func integer(
        _ key: String, _ path: any WritableKeyPath<RealtimeConfiguration, Int> & Sendable, environment: String, minimum: Int, doc: String
    ) -> RealtimeSetting {
        let bounds = Bounds(lower: Double(minimum), includesLower: true)
        return make(
            key, path, environment: environment, kind: .integer, bounds: bounds, doc: doc,
            text: { text in
                if let whole = Int(text) { return whole >= 0 ? .success(whole) : .failure(.expected("not a non-negative number")) }
                if let number = Double(text), number < 0 { return .failure(.expected("not a non-negative number")) }
                return .failure(.expected("not a whole number"))
            },
            json: { value in
                guard let number = number(value), number.rounded() == number, let whole = Int(exactly: number) else {
                    return .failure(.expected("expected a whole number"))
                }
                return .success(whole)
            },
            check: { value in bounds.contains(Double(value)) ? [] : ["\(key): \(bounds)"] }, clamp: { max(minimum, $0) },
            render: { String($0) })
    }

    /// `true` or `false`; `on`/`off` in the environment.
    static func onOff(
        _ key: String, _ path: any WritableKeyPath<RealtimeConfiguration, Bool> & Sendable, environment: String, doc: String
    ) -> RealtimeSetting {
        make(
            key, path, environment: environment, kind: .onOff, doc: doc,
            text: { text in
                switch text.lowercased() {
                case "on", "true", "1": .success(true)
                case "off", "false", "0": .success(false)
                default: .failure(.expected("expected on or off"))
                }
            },
            json: { value in
                guard case .bool(let flag) = value else { return .failure(.expected("expected true or false")) }
                return .success(flag)
            },
            render: { String($0) })
    }

    /// One of an enumeration's raw values (case-insensitive in the environment).
    static func choice<Choice: RawRepresentable<String> & CaseIterable & Sendable>(
        _ key: String, _ path: any WritableKeyPath<RealtimeConfiguration, Choice> & Sendable, environment: String, doc: String
    ) -> RealtimeSetting {
        let names = Choice.allCases.map(\.rawValue)
        @Sendable func alternatives(_ items: [String]) -> String {
            items.count > 1 ? items.dropLast().joined(separator: ", ") + " or " + items[items.count - 1] : items.joined()
        }
        let expected = alternatives(names)
        @Sendable func parse(_ text: String) -> Result<Choice, ValueProblem> {
            let match =
                Choice.allCases.first { $0.rawValue == text } ?? Choice.allCases.first { $0.rawValue.lowercased() == text.lowercased() }
            return match.map { .success($0) } ?? .failure(.expected("expected \(expected)"))
        }
        return make(
            key, path, environment: environment, kind: .choice(names), doc: doc, text: parse,
            json: { value in
                guard case .string(let text) = value, let match = Choice(rawValue: text) else {
                    return .failure(.expected("expected \(alternatives(names.map { "\"\($0)\"" }))"))
                }
                return .success(match)
            },
            render: { $0.rawValue })
    }

    /// Optional text; a `url` is checked by `parseURL` (what it throws is the problem) whenever it is set.
    static func text(
        _ key: String, _ path: any WritableKeyPath<RealtimeConfiguration, String?> & Sendable, environment: String, kind: Kind = .text,
        hidesValue: Bool = false, doc: String, parseURL: (@Sendable (String) throws -> Void)? = nil
    ) -> RealtimeSetting {
        make(
            key, path, environment: environment, kind: kind, hidesValue: hidesValue, doc: doc, text: { .success($0) },
            json: { value in
                switch value {
                case .null: .success(nil)
                case .string(let text): .success(text)
                default: .failure(.expected("expected a string or null"))
                }
            },
            check: { value in
                guard let text = value, let parseURL else { return [] }
                do { try parseURL(text) } catch { return ["\(key): \(error)"] }
                return []
            },
            render: { $0 })
    }

    /// A reconnect policy's text, checked by ``RealtimeConfiguration/validate()`` (never replaced by the default).
    static func reconnectPolicy(
        _ key: String, _ path: any WritableKeyPath<RealtimeConfiguration, String> & Sendable, environment: String, doc: String
    ) -> RealtimeSetting {
        make(
            key, path, environment: environment, kind: .reconnectPolicy, doc: doc, text: { .success($0) },
            json: { value in
                guard case .string(let text) = value else { return .failure(.expected("expected a string such as \"exponential:1:10\"")) }
                return .success(text)
            },
            check: { text in
                do {
                    _ = try ReconnectPolicy(validating: text)
                    return []
                } catch { return ["\(key): \(error)"] }
            },
            render: { $0 })
    }

    /// A `connection_init` template: JSON object text (a file may give the object itself); checked as it is applied.
    static func jsonTemplate(
        _ key: String, _ path: any WritableKeyPath<RealtimeConfiguration, String?> & Sendable, environment: String, defaultNote: String,
        doc: String
    ) -> RealtimeSetting {
        @Sendable func parse(_ text: String) -> Result<String?, ValueProblem> {
            do throws(ConfigurationError) {
                _ = try RealtimeConfiguration.ConnectionPayloadTemplate(text)
                return .success(text)
            } catch { return .failure(.invalid(error.problems)) }
        }
        return make(
            key, path, environment: environment, kind: .jsonTemplate, defaultNote: defaultNote, hidesValue: true, doc: doc,
            text: parse,
            json: { value in
                switch value {
                case .null:
                    return .success(nil)
                case .string(let text):
                    return parse(text)
                case .object:
                    // The template may be written as the object itself; it is kept as JSON text.
                    let encoder = JSONEncoder()
                    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                    guard let data = try? encoder.encode(value) else { return .failure(.expected("expected a JSON object")) }
                    return parse(String(decoding: data, as: UTF8.self))
                default:
                    return .failure(.expected("expected a JSON object or its text"))
                }
            },
            check: { text in
                guard let text else { return [] }
                do throws(ConfigurationError) {
                    _ = try RealtimeConfiguration.ConnectionPayloadTemplate(text)
                    return []
                } catch { return error.problems.map { "\(key): \($0)" } }
            },
            render: { $0 })
    }

    /// The app's GraphQL operations per upstream (a file or code only).
    static func operations(
        _ key: String,
        _ path: any WritableKeyPath<RealtimeConfiguration, [String: RealtimeConfiguration.GraphQLOperationConfiguration]?> & Sendable,
        defaultNote: String, doc: String
    ) -> RealtimeSetting {
        let expected = "expected an object of upstream names to {\"query\": …, \"operationName\": …}"
        return make(
            key, path, environment: nil, kind: .operations, defaultNote: defaultNote, doc: doc,
            text: { _ in .failure(.expected("a file or code only")) },
            json: { value in
                if value == .null { return .success(nil) }
                guard let data = try? JSONEncoder().encode(value),
                    let operations = try? JSONDecoder().decode(
                        [String: RealtimeConfiguration.GraphQLOperationConfiguration].self, from: data)
                else { return .failure(.expected(expected)) }
                return .success(operations)
            },
            check: { operations in
                var problems: [String] = []
                let upstreams = NotifierUpstream.allCases.map(\.rawValue)
                for (name, operation) in (operations ?? [:]).sorted(by: { $0.key < $1.key }) {
                    if !upstreams.contains(name) {
                        problems.append("\(key).\(name): unknown upstream (expected \(upstreams.joined(separator: ", ")))")
                    }
                    if !operation.query.contains("subscription") { problems.append("\(key).\(name): query must be a subscription") }
                }
                return problems
            },
            render: { operations in operations.map { "\($0.keys.sorted())" } })
    }

    // MARK: Parsing

    /// A non-negative finite number from environment text.
    private static func nonNegativeNumber(_ text: String) -> Result<Double, ValueProblem> {
        guard let number = Double(text), number >= 0, number.isFinite else { return .failure(.expected("not a non-negative number")) }
        return .success(number)
    }

    /// A finite number from a JSON value.
    private static func number(_ value: JSONValue) -> Double? {
        guard case .number(let number) = value, number.isFinite else { return nil }
        return number
    }
}
