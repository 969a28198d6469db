import Foundation

/// The parts of a GraphQL schema a subscription document is checked against, read from an introspection result.
public struct IntrospectedSchema: Sendable, Equatable {
    /// A field of an object type.
    public struct Field: Sendable, Equatable {
        /// The field's name.
        public var name: String
        /// Its arguments: name → whether it is required (non-null without a default).
        public var arguments: [String: Bool]
        /// The named type it returns (lists and non-null unwrapped).
        public var type: String
    }

    /// The subscription root type's name (`nil` when the schema has no subscriptions).
    public var subscriptionType: String?
    /// Object and interface types by name, with their fields.
    public var types: [String: [String: Field]]

    /// The introspection query this reads the answer of.
    public static let query = """
        query PreflightIntrospection { __schema { subscriptionType { name } types { name kind fields { name \
        args { name defaultValue type { ...Ref } } type { ...Ref } } } } }
        fragment Ref on __Type { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name } } } } }
        """

    /// Reads the `data` of an introspection result (`{"__schema": …}`).
    public init(data: [String: Any]) throws(ConfigurationError) {
        guard let schema = data["__schema"] as? [String: Any], let types = schema["types"] as? [[String: Any]] else {
            throw ConfigurationError(["introspection: the answer has no __schema.types"])
        }
        subscriptionType = (schema["subscriptionType"] as? [String: Any])?["name"] as? String
        var byName: [String: [String: Field]] = [:]
        for type in types {
            guard let name = type["name"] as? String, let fields = type["fields"] as? [[String: Any]] else { continue }
            var members: [String: Field] = [:]
            for field in fields {
                guard let fieldName = field["name"] as? String, let ref = field["type"] as? [String: Any] else { continue }
                var arguments: [String: Bool] = [:]
                for argument in field["args"] as? [[String: Any]] ?? [] {
                    guard let argumentName = argument["name"] as? String else { continue }
                    let nonNull = (argument["type"] as? [String: Any])?["kind"] as? String == "NON_NULL"
                    arguments[argumentName] = nonNull && (argument["defaultValue"] is NSNull || argument["defaultValue"] == nil)
                }
                members[fieldName] = Field(name: fieldName, arguments: arguments, type: Self.namedType(ref) ?? "")
            }
            byName[name] = members
        }
        self.types = byName
    }

    /// Creates a schema directly (tests).
    public init(subscriptionType: String?, types: [String: [String: Field]]) {
        self.subscriptionType = subscriptionType
        self.types = types
    }

    private static func namedType(_ ref: [String: Any]) -> String? {
        if let name = ref["name"] as? String { return name }
        return (ref["ofType"] as? [String: Any]).flatMap(namedType)
    }

    /// Every problem of `document` against this schema: each missing operation (subscription field), argument or
    /// field named, as `Type.field` or `field(argument:)`. Empty when the document checks out. `operationName` picks
    /// the operation of a document that holds several.
    public func problems(of document: String, operationName: String? = nil) -> [String] {
        let selection: [GraphQLSelection]
        do { selection = try GraphQLSelectionParser.subscription(in: document, operationName: operationName) } catch {
            return ["the document does not parse: \(error)"]
        }
        guard let root = subscriptionType, let rootFields = types[root] else { return ["the schema has no subscription type"] }
        var problems: [String] = []
        for item in selection {
            guard !item.isFragment else {
                problems.append("the document does not parse: fragments are not supported")
                continue
            }
            guard let field = rootFields[item.name] else {
                problems.append("missing operation: \(root).\(item.name)")
                continue
            }
            problems += check(item, field: field, parent: root)
        }
        return problems
    }

    private func check(_ item: GraphQLSelection, field: Field, parent: String) -> [String] {
        var problems: [String] = []
        for argument in item.arguments where field.arguments[argument] == nil {
            problems.append("missing argument: \(parent).\(item.name)(\(argument):)")
        }
        for (argument, required) in field.arguments where required && !item.arguments.contains(argument) {
            problems.append("required argument not given: \(parent).\(item.name)(\(argument):)")
        }
        guard let children = item.children else {
            if types[field.type] != nil { problems.append("\(parent).\(item.name) needs a selection of \(field.type) fields") }
            return problems
        }
        guard let members = types[field.type] else {
            return problems + ["\(parent).\(item.name) is a \(field.type), which has no fields to select"]
        }
        for child in children where !child.name.hasPrefix("__") {
            guard !child.isFragment else {
                problems.append("the document does not parse: fragments are not supported")
                continue
            }
            guard let childField = members[child.name] else {
                problems.append("missing field: \(field.type).\(child.name)")
                continue
            }
            problems += check(child, field: childField, parent: field.type)
        }
        return problems
    }
}
