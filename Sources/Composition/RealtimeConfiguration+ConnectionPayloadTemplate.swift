import BackendNotifier
import Foundation
import GraphQLTransport
import Logging
import SubscriberCore

extension RealtimeConfiguration {
    /// The shape of the GraphQL `connection_init` payload a legacy server expects, as a JSON object template whose
    /// string values may hold placeholders for the credentials: `{"Authorization":"${token}"}`,
    /// `{"headers":{"Authorization":"Bearer ${token}"}}`, `{"x-api-key":"${apiKey}"}`.
    ///
    /// - `${token}`: the session's JWT or Lambda-authorizer token;
    /// - `${apiKey}`: the session's API key.
    ///
    /// A template is checked when it is created (``RealtimeConfiguration/validate()`` reports every problem naming the
    /// key): it must be a JSON object, and every `${…}` must be one of these placeholders, inside a string value (not
    /// a member name). Rendering substitutes the credentials of each connection attempt, escaped as JSON; a
    /// placeholder whose credential the session did not give (`${apiKey}` with a token) becomes an empty string and is
    /// reported by ``render(_:)`` so the caller can log it (never the credential itself).
    public struct ConnectionPayloadTemplate: Sendable, Equatable {
        /// The placeholders a template may use.
        public static let placeholders = ["token", "apiKey"]

        /// The template as configured (JSON object text).
        public let text: String
        private let object: JSONValue

        /// Parses and checks `text`; throws a ``ConfigurationError`` whose problems describe each fault (without the key:
        /// the caller names where the template came from).
        public init(_ text: String) throws(ConfigurationError) {
            let value: JSONValue
            do { value = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)) } catch {
                throw ConfigurationError(["not JSON (expected an object such as {\"Authorization\":\"${token}\"})"])
            }
            guard case .object = value else {
                throw ConfigurationError(["must be a JSON object such as {\"Authorization\":\"${token}\"}"])
            }
            var problems: [String] = []
            Self.check(value, path: "", problems: &problems)
            guard problems.isEmpty else { throw ConfigurationError(problems) }
            self.text = text
            self.object = value
        }

        /// The placeholders the template uses, sorted.
        public var usedPlaceholders: [String] {
            var names: Set<String> = []
            _ = Self.substitute(object, values: [:], unfilled: &names)  // with no values, every placeholder is unfilled
            return names.sorted()
        }

        /// The payload for `credentials` (a JSON object text, members sorted), and the placeholders that had no
        /// credential of their kind (substituted with an empty string).
        public func render(_ credentials: AuthCredentials) -> (json: String, unfilled: [String]) {
            var values: [String: String] = [:]
            switch credentials {
            case .bearerToken(let token), .lambdaToken(let token): values["token"] = token
            case .apiKey(let key): values["apiKey"] = key
            case .iam: break
            }
            var unfilled: Set<String> = []
            let filled = Self.substitute(object, values: values, unfilled: &unfilled)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            let json = (try? encoder.encode(filled)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
            return (json, unfilled.sorted())
        }

        public static func == (lhs: ConnectionPayloadTemplate, rhs: ConnectionPayloadTemplate) -> Bool { lhs.text == rhs.text }

        // MARK: Placeholders

        /// The `${name}` occurrences of `text`, in order; `nil` names an unterminated `${`.
        static func placeholders(in text: String) -> [String?] {
            var found: [String?] = []
            var rest = text[...]
            while let start = rest.range(of: "${") {
                guard let end = rest[start.upperBound...].firstIndex(of: "}") else {
                    found.append(nil)
                    break
                }
                found.append(String(rest[start.upperBound..<end]))
                rest = rest[rest.index(after: end)...]
            }
            return found
        }

        private static func check(_ value: JSONValue, path: String, problems: inout [String]) {
            switch value {
            case .string(let text):
                for name in placeholders(in: text) {
                    guard let name else {
                        problems.append("\(prefix(path))an unterminated \"${\"")
                        continue
                    }
                    if !Self.placeholders.contains(name) {
                        let known = Self.placeholders.map { "${\($0)}" }.joined(separator: ", ")
                        problems.append("\(prefix(path))unknown placeholder ${\(name)} (known: \(known))")
                    }
                }
            case .array(let items):
                for (index, item) in items.enumerated() { check(item, path: "\(path)[\(index)]", problems: &problems) }
            case .object(let members):
                for (key, member) in members.sorted(by: { $0.key < $1.key }) {
                    let memberPath = path.isEmpty ? key : "\(path).\(key)"
                    if key.contains("${") {
                        problems.append("\(prefix(memberPath))a placeholder in a member name (only values may hold one)")
                    }
                    check(member, path: memberPath, problems: &problems)
                }
            case .null, .bool, .number:
                break
            }
        }

        private static func prefix(_ path: String) -> String { path.isEmpty ? "" : "\(path): " }

        private static func substitute(_ value: JSONValue, values: [String: String], unfilled: inout Set<String>) -> JSONValue {
            switch value {
            case .string(var text):
                for name in Set(placeholders(in: text).compactMap { $0 }) {
                    if values[name] == nil { unfilled.insert(name) }
                    text = text.replacingOccurrences(of: "${\(name)}", with: values[name] ?? "")
                }
                return .string(text)
            case .array(let items):
                return .array(items.map { substitute($0, values: values, unfilled: &unfilled) })
            case .object(let members):
                return .object(members.mapValues { substitute($0, values: values, unfilled: &unfilled) })
            case .null, .bool, .number:
                return value
            }
        }
    }

    /// The configured ``graphQLConnectionPayload`` template, parsed; `nil` when none is configured (the transport's
    /// default payload applies). Throws what ``validate()`` reports for it.
    public func connectionPayloadTemplate() throws(ConfigurationError) -> ConnectionPayloadTemplate? {
        guard let graphQLConnectionPayload else { return nil }
        do { return try ConnectionPayloadTemplate(graphQLConnectionPayload) } catch {
            throw ConfigurationError(error.problems.map { "graphQLConnectionPayload: \($0)" })
        }
    }

    /// Builds each `connection_init` payload: the configured template, or the transport's default
    /// (`GraphQLTransportConfiguration/defaultConnectionPayload(_:)`) when none is configured. A placeholder the
    /// session's credentials cannot fill is logged (by name, never a credential) at every attempt.
    public func connectionPayloadBuilder(logger: Logger) throws(ConfigurationError) -> @Sendable (AuthCredentials) -> String {
        guard let template = try connectionPayloadTemplate() else { return GraphQLTransportConfiguration.defaultConnectionPayload }
        return { credentials in
            let (json, unfilled) = template.render(credentials)
            if !unfilled.isEmpty {
                logger.warning(
                    "graphQLConnectionPayload: the credentials fill no placeholder of this kind; sent empty",
                    metadata: ["placeholders": "\(unfilled.map { "${\($0)}" }.joined(separator: ","))"])
            }
            return json
        }
    }
}
