/// The response key of a subscription's root field — its alias, or else its name — read from the GraphQL document.
///
/// `tail --transport graphql` prints each `next`'s `data` object; the transport hands over the root field's value
/// (``SubscriberCore/RealtimePayload/json``), so the CLI puts it back under this key: `{"<key>":<value as sent>}`.
/// A subscription selects exactly one root field (GraphQL spec, "Single root field"), so the key is unambiguous.
enum GraphQLResponseKey {
    /// Why the key could not be found.
    struct Problem: Error, Equatable, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// The response key of the root field of the subscription `operationName` (or of the document's only operation).
    static func find(in document: String, operationName: String?) throws(Problem) -> String {
        let tokens = try tokenize(document)
        var operations: [(type: String, name: String?, selection: Int)] = []
        var index = 0
        while index < tokens.count {
            switch tokens[index] {
            case .punctuator("{"):
                operations.append((type: "query", name: nil, selection: index))
                index = try skipBalanced(tokens, from: index)
            case .name(let keyword) where ["query", "mutation", "subscription"].contains(keyword):
                index += 1
                var name: String?
                if case .name(let operation)? = tokens[safe: index] {
                    name = operation
                    index += 1
                }
                while index < tokens.count, tokens[index] != .punctuator("{") {
                    index = tokens[index] == .punctuator("(") ? try skipBalanced(tokens, from: index) : index + 1
                }
                guard index < tokens.count else { throw Problem("operation \(name ?? keyword) has no selection set") }
                operations.append((type: keyword, name: name, selection: index))
                index = try skipBalanced(tokens, from: index)
            case .name("fragment"):
                while index < tokens.count, tokens[index] != .punctuator("{") { index += 1 }
                guard index < tokens.count else { throw Problem("a fragment has no selection set") }
                index = try skipBalanced(tokens, from: index)
            default:
                throw Problem("unexpected \(tokens[index]) at the top level of the document")
            }
        }
        let chosen: (type: String, name: String?, selection: Int)
        if let operationName {
            guard let named = operations.first(where: { $0.name == operationName }) else {
                throw Problem("no operation named \(operationName)")
            }
            chosen = named
        } else {
            guard operations.count == 1, let only = operations.first else {
                throw Problem(operations.isEmpty ? "the document has no operation" : "several operations: give --operation-name")
            }
            chosen = only
        }
        guard chosen.type == "subscription" else { throw Problem("the operation is a \(chosen.type), not a subscription") }
        switch (tokens[safe: chosen.selection + 1], tokens[safe: chosen.selection + 2], tokens[safe: chosen.selection + 3]) {
        case (.name(let alias)?, .punctuator(":")?, .name(_)?):
            return alias
        case (.name(let field)?, _, _):
            return field
        default:
            throw Problem("the subscription's root field must be written out (not in a fragment) for tail to name it")
        }
    }

    enum Token: Equatable, CustomStringConvertible {
        case name(String)
        case punctuator(String)
        case value

        var description: String {
            switch self {
            case .name(let name): name
            case .punctuator(let text): "'\(text)'"
            case .value: "a value"
            }
        }
    }

    /// Lexes what the search needs: names, punctuators, and every literal (strings, block strings, numbers) as `value`.
    static func tokenize(_ document: String) throws(Problem) -> [Token] {
        let scalars = Array(document.unicodeScalars)
        var tokens: [Token] = []
        var index = 0
        func isNameStart(_ scalar: Unicode.Scalar) -> Bool { scalar == "_" || ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) }
        func isNameContinue(_ scalar: Unicode.Scalar) -> Bool { isNameStart(scalar) || ("0"..."9").contains(scalar) }
        while index < scalars.count {
            let scalar = scalars[index]
            switch scalar {
            case " ", "\t", "\n", "\r", ",", "\u{FEFF}":
                index += 1
            case "#":
                while index < scalars.count, scalars[index] != "\n", scalars[index] != "\r" { index += 1 }
            case "\"":
                let block = index + 2 < scalars.count && scalars[index + 1] == "\"" && scalars[index + 2] == "\""
                index += block ? 3 : 1
                var closed = false
                while index < scalars.count {
                    if block {
                        if scalars[index] == "\\", index + 3 < scalars.count, scalars[index + 1] == "\"", scalars[index + 2] == "\"",
                            scalars[index + 3] == "\""
                        {
                            index += 4
                            continue
                        }
                        if scalars[index] == "\"", index + 2 < scalars.count, scalars[index + 1] == "\"", scalars[index + 2] == "\"" {
                            index += 3
                            closed = true
                            break
                        }
                    } else {
                        if scalars[index] == "\\" {
                            index += 2
                            continue
                        }
                        if scalars[index] == "\"" {
                            index += 1
                            closed = true
                            break
                        }
                        if scalars[index] == "\n" || scalars[index] == "\r" { break }
                    }
                    index += 1
                }
                guard closed else { throw Problem("an unterminated string in the document") }
                tokens.append(.value)
            case ".":
                guard index + 2 < scalars.count, scalars[index + 1] == ".", scalars[index + 2] == "." else {
                    throw Problem("a stray '.' in the document")
                }
                tokens.append(.punctuator("..."))
                index += 3
            case "{", "}", "(", ")", "[", "]", ":", "@", "$", "!", "=", "|", "&":
                tokens.append(.punctuator(String(scalar)))
                index += 1
            default:
                if isNameStart(scalar) {
                    let start = index
                    while index < scalars.count, isNameContinue(scalars[index]) { index += 1 }
                    tokens.append(.name(String(String.UnicodeScalarView(scalars[start..<index]))))
                } else if scalar == "-" || ("0"..."9").contains(scalar) {
                    index += 1
                    while index < scalars.count,
                        isNameContinue(scalars[index]) || scalars[index] == "." || scalars[index] == "+"
                            || scalars[index] == "-"
                    {
                        index += 1
                    }
                    tokens.append(.value)
                } else {
                    throw Problem("an unexpected character '\(scalar)' in the document")
                }
            }
        }
        return tokens
    }

    /// The index just past the bracket that closes the one at `start` (`{` or `(`).
    private static func skipBalanced(_ tokens: [Token], from start: Int) throws(Problem) -> Int {
        var depth = 0
        var index = start
        while index < tokens.count {
            switch tokens[index] {
            case .punctuator("{"), .punctuator("("), .punctuator("["): depth += 1
            case .punctuator("}"), .punctuator(")"), .punctuator("]"): depth -= 1
            default: break
            }
            index += 1
            if depth == 0 { return index }
        }
        throw Problem("unbalanced brackets in the document")
    }
}

extension Array {
    fileprivate subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}
