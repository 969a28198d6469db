/// One lexical token of a GraphQL document, as far as reading operations and selections needs: names, punctuators,
/// and every literal (strings, block strings, numbers) as ``value``. Comments, white space, commas and the byte order
/// mark are skipped.
///
/// The one GraphQL lexer of the package: ``GraphQLSelectionParser`` reads documents with it for preflight and the
/// command line's `tail`.
package enum GraphQLToken: Sendable, Equatable, CustomStringConvertible {
    /// A name: `subscription`, a field, an alias, a variable's name after `$`, `true`, an enum value.
    case name(String)
    /// `{ } ( ) [ ] : @ $ ! = | &` or `...`.
    case punctuator(String)
    /// A string, block string or number literal.
    case value

    /// Why a document could not be lexed.
    package struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// What is wrong, in a few words.
        package var description: String
        package init(_ description: String) { self.description = description }
    }

    /// The token as an error message names it.
    package var description: String {
        switch self {
        case .name(let name): name
        case .punctuator(let text): "'\(text)'"
        case .value: "a value"
        }
    }

    /// The tokens of `document`.
    package static func tokenize(_ document: String) throws(Failure) -> [GraphQLToken] {
        let scalars = Array(document.unicodeScalars)
        var tokens: [GraphQLToken] = []
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
                index = try endOfString(scalars, from: index)
                tokens.append(.value)
            case ".":
                guard index + 2 < scalars.count, scalars[index + 1] == ".", scalars[index + 2] == "." else {
                    throw Failure("a stray '.' in the document")
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
                        isNameContinue(scalars[index]) || scalars[index] == "." || scalars[index] == "+" || scalars[index] == "-"
                    {
                        index += 1
                    }
                    tokens.append(.value)
                } else {
                    throw Failure("an unexpected character '\(scalar)' in the document")
                }
            }
        }
        return tokens
    }

    /// The index just past the string or block string that starts at `start`.
    private static func endOfString(_ scalars: [Unicode.Scalar], from start: Int) throws(Failure) -> Int {
        let block = start + 2 < scalars.count && scalars[start + 1] == "\"" && scalars[start + 2] == "\""
        var index = start + (block ? 3 : 1)
        while index < scalars.count {
            if block {
                if scalars[index] == "\\", index + 3 < scalars.count, scalars[index + 1] == "\"", scalars[index + 2] == "\"",
                    scalars[index + 3] == "\""
                {
                    index += 4
                    continue
                }
                if scalars[index] == "\"", index + 2 < scalars.count, scalars[index + 1] == "\"", scalars[index + 2] == "\"" {
                    return index + 3
                }
            } else {
                if scalars[index] == "\\" {
                    index += 2
                    continue
                }
                if scalars[index] == "\"" { return index + 1 }
                if scalars[index] == "\n" || scalars[index] == "\r" { break }
            }
            index += 1
        }
        throw Failure("an unterminated string in the document")
    }
}
