/// One field of a selection set: its name, the arguments it passes, and its own selection (`nil` for a leaf).
struct GraphQLSelection: Sendable, Equatable {
    var name: String
    var arguments: [String]
    var children: [GraphQLSelection]?
    /// The arguments whose value is a variable: argument name → variable name (without `$`).
    var argumentVariables: [String: String] = [:]
}

/// One variable the operation declares: `$name: Type = default`.
struct GraphQLVariableDefinition: Sendable, Equatable {
    var name: String
    /// The declared type as written, without spaces (`String!`, `[ID!]`).
    var type: String
    var hasDefault: Bool
}

/// Reads the selection of a subscription document, enough to check it against a schema: operation and variable
/// definitions are skipped, aliases resolve to the field's name, fragments are not supported (the notifier's
/// documents use none).
struct GraphQLSelectionParser {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private var tokens: [String]
    private var position = 0
    /// The operation's variable definitions, read by ``parseSubscription()``.
    private(set) var variableDefinitions: [GraphQLVariableDefinition] = []

    init(_ document: String) {
        var tokens: [String] = []
        var current = ""
        var inString = false
        var inComment = false
        for character in document {
            if inComment {
                if character == "\n" { inComment = false }
                continue
            }
            if inString {
                current.append(character)
                if character == "\"" {
                    tokens.append(current)
                    current = ""
                    inString = false
                }
                continue
            }
            if character == "#" {
                inComment = true
            } else if character == "\"" {
                if !current.isEmpty { tokens.append(current) }
                current = "\""
                inString = true
            } else if "{}()[]:!$=@,".contains(character) || character.isWhitespace {
                if !current.isEmpty { tokens.append(current) }
                current = ""
                if !character.isWhitespace && character != "," { tokens.append(String(character)) }
            } else {
                current.append(character)
            }
        }
        if !current.isEmpty { tokens.append(current) }
        self.tokens = tokens
    }

    /// The root selection of the (first) subscription operation.
    mutating func parseSubscription() throws(Failure) -> [GraphQLSelection] {
        guard next() == "subscription" else { throw Failure(description: "not a subscription operation") }
        if let token = peek, token != "{", token != "(" { position += 1 }  // the operation's name
        if peek == "(" { try parseVariableDefinitions() }
        while peek == "@" { try skipDirective() }
        return try parseSelectionSet()
    }

    /// `($name: Type = default @directive, …)`: the type's tokens are joined as written.
    private mutating func parseVariableDefinitions() throws(Failure) {
        try expect("(")
        while peek != ")" {
            try expect("$")
            guard let name = next() else { throw Failure(description: "unterminated variable definitions") }
            try expect(":")
            var type = ""
            while let token = peek, !["=", "@", "$", ")"].contains(token) {
                type += token
                position += 1
            }
            let hasDefault = peek == "="
            if hasDefault {
                position += 1
                try skipValue()
            }
            while peek == "@" { try skipDirective() }
            variableDefinitions.append(GraphQLVariableDefinition(name: name, type: type, hasDefault: hasDefault))
        }
        position += 1
    }

    private var peek: String? { position < tokens.count ? tokens[position] : nil }

    private mutating func next() -> String? {
        defer { position += 1 }
        return peek
    }

    private mutating func expect(_ token: String) throws(Failure) {
        guard next() == token else { throw Failure(description: "expected \"\(token)\"") }
    }

    private mutating func skipBalanced(_ open: String, _ close: String) throws(Failure) {
        try expect(open)
        var depth = 1
        while depth > 0 {
            guard let token = next() else { throw Failure(description: "unbalanced \"\(open)\"") }
            if token == open { depth += 1 } else if token == close { depth -= 1 }
        }
    }

    private mutating func skipDirective() throws(Failure) {
        try expect("@")
        _ = next()
        if peek == "(" { try skipBalanced("(", ")") }
    }

    private mutating func parseSelectionSet() throws(Failure) -> [GraphQLSelection] {
        try expect("{")
        var selection: [GraphQLSelection] = []
        while peek != "}" {
            guard var name = next() else { throw Failure(description: "unterminated selection set") }
            if name == "..." || name.hasPrefix("...") { throw Failure(description: "fragments are not supported") }
            if peek == ":" {  // an alias
                position += 1
                guard let field = next() else { throw Failure(description: "alias without a field") }
                name = field
            }
            var arguments: [String] = []
            var argumentVariables: [String: String] = [:]
            if peek == "(" {
                position += 1
                while peek != ")" {
                    guard let argument = next() else { throw Failure(description: "unterminated arguments") }
                    arguments.append(argument)
                    try expect(":")
                    if peek == "$", position + 1 < tokens.count { argumentVariables[argument] = tokens[position + 1] }
                    try skipValue()
                }
                position += 1
            }
            while peek == "@" { try skipDirective() }
            let children: [GraphQLSelection]? = if peek == "{" { try parseSelectionSet() } else { nil }
            selection.append(
                GraphQLSelection(name: name, arguments: arguments, children: children, argumentVariables: argumentVariables))
        }
        position += 1
        return selection
    }

    private mutating func skipValue() throws(Failure) {
        switch peek {
        case "$": position += 2
        case "{": try skipBalanced("{", "}")
        case "[": try skipBalanced("[", "]")
        case nil: throw Failure(description: "missing value")
        default: position += 1
        }
    }
}
