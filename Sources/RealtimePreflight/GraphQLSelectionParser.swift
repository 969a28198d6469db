/// One entry of a selection set: a field with its name, the key it answers under, the arguments it passes and its own
/// selection (`nil` for a leaf), or a fragment (`...Name` or an inline `... on Type { … }`).
package struct GraphQLSelection: Sendable, Equatable {
    /// The field's name; `...` for a fragment.
    package var name: String
    /// The key the field answers under in a response: its alias, or else its name.
    package var responseKey: String
    /// The names of the arguments passed.
    package var arguments: [String]
    /// The field's selection (an inline fragment's too); `nil` for a leaf or a fragment spread.
    package var children: [GraphQLSelection]?
    /// The arguments whose value is a variable: argument name → variable name (without `$`).
    package var argumentVariables: [String: String]

    /// Creates an entry; the response key defaults to the name.
    package init(
        name: String, responseKey: String? = nil, arguments: [String] = [], children: [GraphQLSelection]? = nil,
        argumentVariables: [String: String] = [:]
    ) {
        self.name = name
        self.responseKey = responseKey ?? name
        self.arguments = arguments
        self.children = children
        self.argumentVariables = argumentVariables
    }

    /// Whether this entry is a fragment spread or an inline fragment.
    package var isFragment: Bool { name == "..." }
}

/// One variable an operation declares: `$name: Type = default`.
package struct GraphQLVariableDefinition: Sendable, Equatable {
    /// The variable's name, without `$`.
    package var name: String
    /// The declared type as written, without spaces (`String!`, `[ID!]`).
    package var type: String
    /// Whether the definition gives a default value.
    package var hasDefault: Bool
}

/// One operation of a document, as read: its root selection and its variable definitions.
package struct GraphQLOperationReading: Sendable, Equatable {
    /// The root selection set.
    package var selection: [GraphQLSelection]
    /// The variables the operation declares, in order.
    package var variableDefinitions: [GraphQLVariableDefinition]
}

/// Reads the selection of one subscription operation of a GraphQL document, from the tokens of ``GraphQLToken``:
/// enough to check it against a schema (preflight) and to name its root field's response key (`tail`). Operation and
/// values and directives are skipped, variable definitions are read (``GraphQLOperationReading``); fragment definitions are skipped and fragments in a
/// selection are listed as such (``GraphQLSelection/isFragment``), not resolved.
package struct GraphQLSelectionParser {
    /// Why the document could not be read.
    package struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// What is wrong, in a few words.
        package var description: String
        package init(_ description: String) { self.description = description }

        /// The document holds several operations and none was named.
        package static let severalOperations = Failure("several operations: name the one to use")
    }

    private let tokens: [GraphQLToken]
    private var position = 0

    private init(tokens: [GraphQLToken]) { self.tokens = tokens }

    /// The root selection of the subscription `operationName`, or of the document's only operation when `nil`.
    package static func subscription(in document: String, operationName: String? = nil) throws(Failure) -> [GraphQLSelection] {
        try subscriptionOperation(in: document, operationName: operationName).selection
    }

    /// The subscription `operationName` (or the document's only operation when `nil`): its root selection and its
    /// variable definitions.
    package static func subscriptionOperation(in document: String, operationName: String? = nil) throws(Failure) -> GraphQLOperationReading
    {
        let tokens: [GraphQLToken]
        do { tokens = try GraphQLToken.tokenize(document) } catch { throw Failure(error.description) }
        var parser = GraphQLSelectionParser(tokens: tokens)
        let operations = try parser.operations()
        let chosen: Operation
        if let operationName {
            guard let named = operations.first(where: { $0.name == operationName }) else {
                throw Failure("no operation named \(operationName)")
            }
            chosen = named
        } else {
            guard operations.count == 1, let only = operations.first else {
                throw operations.isEmpty ? Failure("the document has no operation") : .severalOperations
            }
            chosen = only
        }
        guard chosen.type == "subscription" else { throw Failure("the operation is a \(chosen.type), not a subscription") }
        parser.position = chosen.variables ?? chosen.selection
        let variables = chosen.variables != nil ? try parser.parseVariableDefinitions() : []
        parser.position = chosen.selection
        return GraphQLOperationReading(selection: try parser.parseSelectionSet(), variableDefinitions: variables)
    }

    /// An operation of the document: its type, its name, where its variable definitions and selection set start.
    private struct Operation {
        var type: String
        var name: String?
        var variables: Int? = nil
        var selection: Int
    }

    /// Every operation of the document; fragment definitions are skipped.
    private mutating func operations() throws(Failure) -> [Operation] {
        var operations: [Operation] = []
        while let token = peek {
            switch token {
            case .punctuator("{"):
                operations.append(Operation(type: "query", name: nil, selection: position))
                try skipBalanced()
            case .name(let keyword) where ["query", "mutation", "subscription"].contains(keyword):
                position += 1
                var name: String?
                if case .name(let operation)? = peek {
                    name = operation
                    position += 1
                }
                let variables: Int? = peek == .punctuator("(") ? position : nil
                try skipToSelectionSet("operation \(name ?? keyword)")
                operations.append(Operation(type: keyword, name: name, variables: variables, selection: position))
                try skipBalanced()
            case .name("fragment"):
                try skipToSelectionSet("a fragment")
                try skipBalanced()
            default:
                throw Failure("unexpected \(token) at the top level of the document")
            }
        }
        return operations
    }

    /// `($name: Type = default @directive, …)`: the type's tokens are joined as written.
    private mutating func parseVariableDefinitions() throws(Failure) -> [GraphQLVariableDefinition] {
        try expect(.punctuator("("))
        var definitions: [GraphQLVariableDefinition] = []
        while peek != .punctuator(")") {
            try expect(.punctuator("$"))
            guard case .name(let name)? = next() else { throw Failure("a variable definition without a name") }
            try expect(.punctuator(":"))
            var type = ""
            while let token = peek, ![.punctuator("="), .punctuator("@"), .punctuator("$"), .punctuator(")")].contains(token) {
                switch token {
                case .name(let text), .punctuator(let text): type += text
                case .value: throw Failure("a value in the type of $\(name)")
                }
                position += 1
            }
            let hasDefault = peek == .punctuator("=")
            if hasDefault {
                position += 1
                try skipValue()
            }
            try skipDirectives()
            definitions.append(GraphQLVariableDefinition(name: name, type: type, hasDefault: hasDefault))
        }
        position += 1
        return definitions
    }

    private var peek: GraphQLToken? { position < tokens.count ? tokens[position] : nil }

    private mutating func next() -> GraphQLToken? {
        defer { position += 1 }
        return peek
    }

    private mutating func expect(_ token: GraphQLToken) throws(Failure) {
        guard next() == token else { throw Failure("expected \(token)") }
    }

    /// Moves to the `{` that opens the selection set of an operation or fragment definition, over variable definitions
    /// (with their default values) and directives.
    private mutating func skipToSelectionSet(_ what: String) throws(Failure) {
        while let token = peek, token != .punctuator("{") {
            if token == .punctuator("(") { try skipBalanced() } else { position += 1 }
        }
        guard peek != nil else { throw Failure("\(what) has no selection set") }
    }

    /// Moves just past the bracket that closes the one at the current position (`{`, `(` or `[`).
    private mutating func skipBalanced() throws(Failure) {
        var depth = 0
        while let token = next() {
            switch token {
            case .punctuator("{"), .punctuator("("), .punctuator("["): depth += 1
            case .punctuator("}"), .punctuator(")"), .punctuator("]"): depth -= 1
            default: break
            }
            if depth == 0 { return }
        }
        throw Failure("unbalanced brackets in the document")
    }

    private mutating func skipDirectives() throws(Failure) {
        while peek == .punctuator("@") {
            position += 1
            guard case .name? = next() else { throw Failure("a directive without a name") }
            if peek == .punctuator("(") { try skipBalanced() }
        }
    }

    private mutating func parseSelectionSet() throws(Failure) -> [GraphQLSelection] {
        try expect(.punctuator("{"))
        var selection: [GraphQLSelection] = []
        while peek != .punctuator("}") {
            guard let token = next() else { throw Failure("unterminated selection set") }
            switch token {
            case .punctuator("..."):
                selection.append(try parseFragment())
            case .name(let first):
                var name = first
                var responseKey = first
                if peek == .punctuator(":") {  // an alias
                    position += 1
                    guard case .name(let field)? = next() else { throw Failure("alias \(first) without a field") }
                    name = field
                    responseKey = first
                }
                var arguments: [String] = []
                var argumentVariables: [String: String] = [:]
                if peek == .punctuator("(") {
                    position += 1
                    while peek != .punctuator(")") {
                        guard case .name(let argument)? = next() else { throw Failure("unterminated arguments of \(name)") }
                        arguments.append(argument)
                        try expect(.punctuator(":"))
                        if peek == .punctuator("$"), position + 1 < tokens.count, case .name(let variable) = tokens[position + 1] {
                            argumentVariables[argument] = variable
                        }
                        try skipValue()
                    }
                    position += 1
                }
                try skipDirectives()
                let children: [GraphQLSelection]? = if peek == .punctuator("{") { try parseSelectionSet() } else { nil }
                selection.append(
                    GraphQLSelection(
                        name: name, responseKey: responseKey, arguments: arguments, children: children,
                        argumentVariables: argumentVariables))
            default:
                throw Failure("unexpected \(token) in a selection set")
            }
        }
        position += 1
        return selection
    }

    /// After `...`: a spread (`...Name`) or an inline fragment (`... on Type @dir { … }`, the type condition optional).
    private mutating func parseFragment() throws(Failure) -> GraphQLSelection {
        if case .name(let name)? = peek, name != "on" {
            position += 1
            try skipDirectives()
            return GraphQLSelection(name: "...", responseKey: "...\(name)")
        }
        if peek == .name("on") { position += 2 }
        try skipDirectives()
        return GraphQLSelection(name: "...", children: try parseSelectionSet())
    }

    private mutating func skipValue() throws(Failure) {
        switch peek {
        case .punctuator("$"): position += 2
        case .punctuator("{"), .punctuator("["): try skipBalanced()
        case nil: throw Failure("missing value")
        default: position += 1
        }
    }
}
