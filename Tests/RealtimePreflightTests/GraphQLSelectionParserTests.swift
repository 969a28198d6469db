import Testing
@testable import RealtimePreflight

/// The package's one GraphQL reader (``GraphQLToken``, ``GraphQLSelectionParser``): what preflight checks against a
/// schema and what `tail --transport graphql` names its output by.
@Suite("GraphQL tokens and selections")
struct GraphQLSelectionParserTests {
    @Test("names, punctuators and literals; comments, commas, white space and the byte order mark are skipped")
    func tokens() throws {
        let document =
            "\u{FEFF}subscription S($a: [Int!] = [1, -2.5e3]) # a comment { not a token\n{ f(s: \"x\\\"}\", b: \"\"\"a\\\"\"\"b\"\"\") @skip(if: false) { ...F ... on T { g } } }"
        let tokens = try GraphQLToken.tokenize(document)
        #expect(
            tokens == [
                .name("subscription"), .name("S"), .punctuator("("), .punctuator("$"), .name("a"), .punctuator(":"), .punctuator("["),
                .name("Int"), .punctuator("!"), .punctuator("]"), .punctuator("="), .punctuator("["), .value, .value, .punctuator("]"),
                .punctuator(")"), .punctuator("{"), .name("f"), .punctuator("("), .name("s"), .punctuator(":"), .value, .name("b"),
                .punctuator(":"), .value, .punctuator(")"), .punctuator("@"), .name("skip"), .punctuator("("), .name("if"),
                .punctuator(":"),
                .name("false"), .punctuator(")"), .punctuator("{"), .punctuator("..."), .name("F"), .punctuator("..."), .name("on"),
                .name("T"), .punctuator("{"), .name("g"), .punctuator("}"), .punctuator("}"), .punctuator("}"),
            ])
    }

    @Test(
        "documents that do not lex say why",
        arguments: [
            ("subscription { f(s: \"open) }", "an unterminated string in the document"),
            ("subscription { f(s: \"\"\"open) }", "an unterminated string in the document"),
            ("subscription { f(s: \"line\nbreak\") }", "an unterminated string in the document"),
            ("subscription { .. }", "a stray '.' in the document"),
            ("subscription { f; }", "an unexpected character ';' in the document"),
        ])
    func lexFailures(document: String, reason: String) {
        #expect(throws: GraphQLToken.Failure(reason)) { try GraphQLToken.tokenize(document) }
        #expect(throws: GraphQLSelectionParser.Failure(reason)) { try GraphQLSelectionParser.subscription(in: document) }
    }

    @Test("fields with aliases, arguments (and the variables they take), directives and nested selections; defaults skipped")
    func selection() throws {
        let document = """
            subscription Device($orgId: String! = "o-1", $filter: In = {a: [1, {b: 2}]}) @live {
              device: subscribeDeviceState(orgId: $orgId, filter: {x: [1, 2]}, tag: ALL) @include(if: true) {
                mac
                state: online
                AIControlSetting { uuid options }
                __typename
              }
            }
            """
        #expect(
            try GraphQLSelectionParser.subscription(in: document) == [
                GraphQLSelection(
                    name: "subscribeDeviceState", responseKey: "device", arguments: ["orgId", "filter", "tag"],
                    children: [
                        GraphQLSelection(name: "mac"), GraphQLSelection(name: "online", responseKey: "state"),
                        GraphQLSelection(
                            name: "AIControlSetting", children: [GraphQLSelection(name: "uuid"), GraphQLSelection(name: "options")]),
                        GraphQLSelection(name: "__typename"),
                    ],
                    argumentVariables: ["orgId": "orgId"])
            ])
    }

    @Test("the named operation, or the only one; fragment definitions are skipped and fragments in a selection listed")
    func operations() throws {
        let document = """
            query Q { health }
            fragment F on DeviceStateOutput @x { mac ...G }
            subscription A { a: subscribeRoleChange { reason } }
            subscription B { subscribeDeviceState { ...F ... on DeviceStateOutput { online } } }
            """
        #expect(try GraphQLSelectionParser.subscription(in: document, operationName: "A").map(\.responseKey) == ["a"])
        let b = try GraphQLSelectionParser.subscription(in: document, operationName: "B")
        let fragments = try #require(b.first?.children)
        #expect(fragments.map(\.isFragment) == [true, true])
        #expect(fragments.first?.children == nil)
        #expect(fragments.last?.children == [GraphQLSelection(name: "online")])
        #expect(throws: GraphQLSelectionParser.Failure.severalOperations) { try GraphQLSelectionParser.subscription(in: document) }
        #expect(throws: GraphQLSelectionParser.Failure("no operation named C")) {
            try GraphQLSelectionParser.subscription(in: document, operationName: "C")
        }
        #expect(throws: GraphQLSelectionParser.Failure("the operation is a query, not a subscription")) {
            try GraphQLSelectionParser.subscription(in: document, operationName: "Q")
        }
        #expect(
            try GraphQLSelectionParser.subscription(in: "subscription { ...F } fragment F on Subscription { x }").map(\.isFragment)
                == [true])
    }

    @Test(
        "documents that do not parse say why",
        arguments: [
            ("", "the document has no operation"),
            ("{ health }", "the operation is a query, not a subscription"),
            ("subscription S", "operation S has no selection set"),
            ("fragment F on T", "a fragment has no selection set"),
            ("subscription { f { g }", "unbalanced brackets in the document"),
            ("subscription { f(a: 1 }", "unbalanced brackets in the document"),
            ("type T { f: Int }", "unexpected type at the top level of the document"),
            ("subscription { a: }", "alias a without a field"),
            ("subscription { f @ }", "a directive without a name"),
            ("subscription { 1 }", "unexpected a value in a selection set"),
        ])
    func parseFailures(document: String, reason: String) {
        #expect(throws: GraphQLSelectionParser.Failure(reason)) { try GraphQLSelectionParser.subscription(in: document) }
    }

    @Test("variable definitions are read with their types as written, defaults and directives skipped")
    func variableDefinitions() throws {
        let document = """
            subscription A { a: subscribeRoleChange { reason } }
            subscription B($orgId: String! = "o-1" @deprecated, $ids: [ID!], $n: Int) { subscribeDeviceState(orgId: $orgId) { mac } }
            """
        let reading = try GraphQLSelectionParser.subscriptionOperation(in: document, operationName: "B")
        #expect(
            reading.variableDefinitions == [
                GraphQLVariableDefinition(name: "orgId", type: "String!", hasDefault: true),
                GraphQLVariableDefinition(name: "ids", type: "[ID!]", hasDefault: false),
                GraphQLVariableDefinition(name: "n", type: "Int", hasDefault: false),
            ])
        #expect(reading.selection.first?.argumentVariables == ["orgId": "orgId"])
        #expect(try GraphQLSelectionParser.subscriptionOperation(in: document, operationName: "A").variableDefinitions.isEmpty)
    }
}
