import Composition
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
        /// Each argument's full type (`ID!`, `[String]`), where the schema gave it.
        public var argumentTypes: [String: TypeReference] = [:]
    }

    /// A type as a field argument or a variable definition writes it: a named type wrapped in lists and non-null.
    public indirect enum TypeReference: Sendable, Equatable, CustomStringConvertible {
        /// A named type (`String`, `ID`, an enum or an input object).
        case named(String)
        /// A list of the wrapped type.
        case list(TypeReference)
        /// The wrapped type, non-null.
        case nonNull(TypeReference)

        /// Reads GraphQL type syntax (`[ID!]!`); `nil` when it is not a type.
        public init?(parsing text: String) {
            let text = text.filter { !$0.isWhitespace }
            if text.hasSuffix("!") {
                guard let inner = TypeReference(parsing: String(text.dropLast())), !inner.isNonNull else { return nil }
                self = .nonNull(inner)
            } else if text.hasPrefix("[") && text.hasSuffix("]") {
                guard let inner = TypeReference(parsing: String(text.dropFirst().dropLast())) else { return nil }
                self = .list(inner)
            } else if let first = text.first, first == "_" || first.isLetter, text.allSatisfy({ $0 == "_" || $0.isLetter || $0.isNumber }) {
                self = .named(text)
            } else {
                return nil
            }
        }

        /// Reads an introspection type reference (`{"kind":"NON_NULL","ofType":{…}}`).
        init?(introspection ref: [String: Any]) {
            switch ref["kind"] as? String {
            case "NON_NULL":
                guard let inner = (ref["ofType"] as? [String: Any]).flatMap(TypeReference.init(introspection:)) else { return nil }
                self = .nonNull(inner)
            case "LIST":
                guard let inner = (ref["ofType"] as? [String: Any]).flatMap(TypeReference.init(introspection:)) else { return nil }
                self = .list(inner)
            default:
                guard let name = ref["name"] as? String else { return nil }
                self = .named(name)
            }
        }

        /// Whether it is non-null at the top.
        public var isNonNull: Bool { if case .nonNull = self { true } else { false } }

        /// The named type inside the wrappers.
        public var namedType: String {
            switch self {
            case .named(let name): name
            case .list(let inner), .nonNull(let inner): inner.namedType
            }
        }

        /// Whether a variable of this type may be used where `location` is expected (the GraphQL specification's
        /// "AreTypesCompatible": a nullable variable cannot fill a non-null argument, lists must match lists, names
        /// must be equal).
        public func fits(_ location: TypeReference) -> Bool {
            switch (self, location) {
            case (.nonNull(let variable), .nonNull(let expected)): variable.fits(expected)
            case (_, .nonNull): false
            case (.nonNull(let variable), _): variable.fits(location)
            case (.list(let variable), .list(let expected)): variable.fits(expected)
            case (.list, _), (_, .list): false
            case (.named(let variable), .named(let expected)): variable == expected
            }
        }

        public var description: String {
            switch self {
            case .named(let name): name
            case .list(let inner): "[\(inner)]"
            case .nonNull(let inner): "\(inner)!"
            }
        }
    }

    /// The subscription root type's name (`nil` when the schema has no subscriptions).
    public var subscriptionType: String?
    /// Object and interface types by name, with their fields.
    public var types: [String: [String: Field]]
    /// Every type's kind by name (`SCALAR`, `ENUM`, `INPUT_OBJECT`, `OBJECT`, …); empty when the schema was built in
    /// code without them.
    public var kinds: [String: String] = [:]

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
            if let name = type["name"] as? String, let kind = type["kind"] as? String { kinds[name] = kind }
            guard let name = type["name"] as? String, let fields = type["fields"] as? [[String: Any]] else { continue }
            var members: [String: Field] = [:]
            for field in fields {
                guard let fieldName = field["name"] as? String, let ref = field["type"] as? [String: Any] else { continue }
                var arguments: [String: Bool] = [:]
                var argumentTypes: [String: TypeReference] = [:]
                for argument in field["args"] as? [[String: Any]] ?? [] {
                    guard let argumentName = argument["name"] as? String else { continue }
                    let nonNull = (argument["type"] as? [String: Any])?["kind"] as? String == "NON_NULL"
                    arguments[argumentName] = nonNull && (argument["defaultValue"] is NSNull || argument["defaultValue"] == nil)
                    argumentTypes[argumentName] = (argument["type"] as? [String: Any]).flatMap(TypeReference.init(introspection:))
                }
                members[fieldName] = Field(
                    name: fieldName, arguments: arguments, type: Self.namedType(ref) ?? "", argumentTypes: argumentTypes)
            }
            byName[name] = members
        }
        self.types = byName
    }

    /// Creates a schema directly (tests).
    public init(subscriptionType: String?, types: [String: [String: Field]], kinds: [String: String] = [:]) {
        self.subscriptionType = subscriptionType
        self.types = types
        self.kinds = kinds
    }

    private static func namedType(_ ref: [String: Any]) -> String? {
        if let name = ref["name"] as? String { return name }
        return (ref["ofType"] as? [String: Any]).flatMap(namedType)
    }

    /// Every problem of `document` against this schema: each missing operation (subscription field), argument or
    /// field named, as `Type.field` or `field(argument:)`. Empty when the document checks out. `operationName` picks
    /// the operation of a document that holds several.
    ///
    /// With `supplied` (the variables the notifier will send: `userId`, `orgId`, `organizationId` as the document
    /// declares them, all strings), the variables are checked too, each mismatch named: a required variable nobody
    /// supplies, a declared type that cannot hold a string, a type unknown to the schema, a variable used where its
    /// type does not fit the argument's, one used but not declared, one declared but not used.
    public func problems(of document: String, operationName: String? = nil, supplied: Set<String>? = nil) -> [String] {
        let operation: GraphQLOperationReading
        do { operation = try GraphQLSelectionParser.subscriptionOperation(in: document, operationName: operationName) } catch {
            return ["the document does not parse: \(error)"]
        }
        let selection = operation.selection
        guard let root = subscriptionType, let rootFields = types[root] else { return ["the schema has no subscription type"] }
        var problems = check(selection, of: root, fields: rootFields, missing: "operation")
        if let supplied {
            problems += variableProblems(operation.variableDefinitions, selection: selection, root: root, supplied: supplied)
        }
        return problems
    }

    private func variableProblems(
        _ definitions: [GraphQLVariableDefinition], selection: [GraphQLSelection], root: String, supplied: Set<String>
    ) -> [String] {
        var problems: [String] = []
        var declared: [String: TypeReference] = [:]
        for definition in definitions {
            guard let type = TypeReference(parsing: definition.type) else {
                problems.append("variable $\(definition.name): \"\(definition.type)\" is not a type")
                continue
            }
            declared[definition.name] = type
            if supplied.contains(definition.name) {
                if let problem = stringProblem(type) { problems.append("variable $\(definition.name): \(type) \(problem)") }
            } else if type.isNonNull && !definition.hasDefault {
                let known = supplied.sorted().map { "$\($0)" }.joined(separator: ", ")
                problems.append(
                    "variable $\(definition.name): \(type) is required, but the notifier supplies only \(known.isEmpty ? "none" : known)")
            }
        }
        var used: Set<String> = []
        func visit(_ items: [GraphQLSelection], parent: String) {
            for item in items {
                let field = types[parent]?[item.name]
                for (argument, variable) in item.argumentVariables.sorted(by: { $0.key < $1.key }) {
                    used.insert(variable)
                    guard let type = declared[variable] else {
                        if !definitions.contains(where: { $0.name == variable }) {
                            problems.append("variable $\(variable): used in \(parent).\(item.name)(\(argument):) but not declared")
                        }
                        continue
                    }
                    if let expected = field?.argumentTypes[argument], !type.fits(expected) {
                        problems.append(
                            "variable $\(variable): declared \(type), but \(parent).\(item.name)(\(argument):) expects \(expected)")
                    }
                }
                if let children = item.children, let field { visit(children, parent: field.type) }
            }
        }
        visit(selection, parent: root)
        for definition in definitions where !used.contains(definition.name) && declared[definition.name] != nil {
            problems.append("variable $\(definition.name): declared but not used")
        }
        return problems
    }

    /// Why a variable of `type` cannot carry the identity string the notifier sends, or `nil` when it can.
    private func stringProblem(_ type: TypeReference) -> String? {
        let name = type.namedType
        switch name {
        case "String", "ID": return nil
        case "Int", "Float", "Boolean": return "cannot hold the identity the notifier sends (a string)"
        default:
            guard !kinds.isEmpty else { return nil }
            switch kinds[name] {
            case nil: return "is not a type of the schema"
            case "SCALAR": return nil  // a custom scalar: the server decides what it accepts
            case let kind?: return "is an \(kind.lowercased().replacingOccurrences(of: "_", with: " ")), which cannot hold a string"
            }
        }
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
        return problems + check(children.filter { !$0.name.hasPrefix("__") }, of: field.type, fields: members, missing: "field")
    }

    /// Each of `items` checked as a selection of `type`, whose fields are `fields`; `missing` says what an unknown one
    /// is (`operation` at the root, else `field`).
    private func check(_ items: [GraphQLSelection], of type: String, fields: [String: Field], missing: String) -> [String] {
        items.flatMap { item -> [String] in
            guard !item.isFragment else { return ["the document does not parse: fragments are not supported"] }
            guard let field = fields[item.name] else { return ["missing \(missing): \(type).\(item.name)"] }
            return check(item, field: field, parent: type)
        }
    }
}
