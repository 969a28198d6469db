import GraphQL
import OrderedCollections
import SubscriberCore

/// A subscription document's selection, compiled once so that each event's `data` is written straight from its
/// ``LegacyEventSource`` instead of through a GraphQLSwift execution (which runs every field as a child task).
///
/// Only plain selections compile: one operation, no fragments, no directives, no duplicate response keys, fields of
/// the types `String`, `Int`, `Float`, `Boolean`, `JSON` (nullable or not) and nullable nested objects (aliases and
/// `__typename` are fine).
/// Anything else gives `nil`, and the connection executes every event with GraphQLSwift.
///
/// Rendering an event declines (`nil`) whenever a value is not the one shape its scalar takes as it is (a string for
/// `String`, a whole number for `Int`, …): GraphQLSwift would coerce it or report a field error, so that event is
/// executed by GraphQLSwift instead. `LegacySelectionPlanTests` checks the output byte for byte against GraphQLSwift's
/// on every kind of event and on the documents the library sends.
struct LegacySelectionPlan: Sendable {
    private enum Leaf: Sendable {
        case string, int, float, boolean, json
    }

    private indirect enum Value: Sendable {
        /// A scalar; `required` for a non-null one, whose absence GraphQLSwift reports as an error.
        case leaf(Leaf, required: Bool)
        case object(ObjectPlan)
        case typename(String)
    }

    private struct Member: Sendable {
        /// The response key as JSON text, with its colon: `"alias":`.
        let keyPrefix: String
        /// The field read from the source (unused for `__typename`).
        let fieldName: String
        let value: Value
    }

    private struct ObjectPlan: Sendable {
        let members: [Member]
    }

    /// `{"<response key>":` of the subscription field.
    private let rootPrefix: String
    private let root: ObjectPlan

    /// Compiles the operation GraphQLSwift runs for `operationName` (the only one when `nil`); `nil` when the document
    /// is not a plain selection of one subscription field.
    init?(document: Document, operationName: String?, schema: GraphQLSchema) {
        var chosen: OperationDefinition?
        for definition in document.definitions {
            guard let operation = definition as? OperationDefinition else { return nil }
            if let operationName {
                if operation.name?.value == operationName { chosen = operation }
            } else {
                guard chosen == nil else { return nil }
                chosen = operation
            }
        }
        guard let operation = chosen, operation.operation == .subscription, operation.directives.isEmpty,
            operation.selectionSet.selections.count == 1, let field = operation.selectionSet.selections.first as? Field,
            field.directives.isEmpty, let selectionSet = field.selectionSet,
            let definition = try? schema.subscriptionType?.fields()[field.name.value],
            let outputType = definition.type as? GraphQLObjectType,
            let root = Self.compile(selectionSet, of: outputType)
        else { return nil }
        self.rootPrefix = "{" + JSONString.quoted(field.alias?.value ?? field.name.value) + ":"
        self.root = root
    }

    private static func compile(_ selectionSet: SelectionSet, of type: GraphQLObjectType) -> ObjectPlan? {
        guard let definitions = try? type.fields() else { return nil }
        var members: [Member] = []
        var keys: Set<String> = []
        for selection in selectionSet.selections {
            guard let field = selection as? Field, field.directives.isEmpty, field.arguments.isEmpty else { return nil }
            let key = field.alias?.value ?? field.name.value
            guard keys.insert(key).inserted else { return nil }
            let value: Value
            if field.name.value == "__typename" {
                guard field.selectionSet == nil else { return nil }
                value = .typename(type.name)
            } else {
                guard let definition = definitions[field.name.value] else { return nil }
                let nonNull = definition.type as? GraphQLNonNull
                switch nonNull?.ofType ?? definition.type {
                case let object as GraphQLObjectType where nonNull == nil:
                    guard let nested = field.selectionSet, let plan = compile(nested, of: object) else { return nil }
                    value = .object(plan)
                case let scalar as GraphQLScalarType:
                    guard field.selectionSet == nil, let leaf = Self.leaf(named: scalar.name) else { return nil }
                    value = .leaf(leaf, required: nonNull != nil)
                default:
                    return nil
                }
            }
            members.append(Member(keyPrefix: JSONString.quoted(key) + ":", fieldName: field.name.value, value: value))
        }
        return ObjectPlan(members: members)
    }

    private static func leaf(named name: String) -> Leaf? {
        switch name {
        case "String": .string
        case "Int": .int
        case "Float": .float
        case "Boolean": .boolean
        case "JSON": .json
        default: nil
        }
    }

    /// The `data` of the `next` message for `source`, as JSON text; `nil` when a value needs GraphQLSwift.
    func data(for source: LegacyEventSource) -> String? {
        var text = rootPrefix
        guard Self.render(root, source.fields, into: &text) else { return nil }
        text += "}"
        return text
    }

    private static func render(_ plan: ObjectPlan, _ fields: [String: any Sendable], into text: inout String) -> Bool {
        text += "{"
        for (index, member) in plan.members.enumerated() {
            if index > 0 { text += "," }
            text += member.keyPrefix
            switch member.value {
            case .typename(let name):
                text += JSONString.quoted(name)
            case .object(let nested):
                switch fields[member.fieldName] {
                case .none: text += "null"
                case let members as [String: any Sendable]: guard render(nested, members, into: &text) else { return false }
                default: return false
                }
            case .leaf(let leaf, let required):
                guard let value = fields[member.fieldName] else {
                    guard !required else { return false }
                    text += "null"
                    continue
                }
                guard let map = value as? Map, let json = Self.render(map, as: leaf) else { return false }
                text += json
            }
        }
        text += "}"
        return true
    }

    /// A scalar as GraphQLSwift serializes and prints it, for the shapes it takes unchanged. An explicit `null` is
    /// not one of them: its scalars report a field error for it (an absent field is plain `null`).
    private static func render(_ map: Map, as leaf: Leaf) -> String? {
        switch (leaf, map) {
        case (_, .null), (_, .undefined): nil
        case (.string, .string(let value)): JSONString.quoted(value)
        case (.boolean, .bool(let value)): value ? "true" : "false"
        case (.int, .number(let number)) where number.storageType == .int: String(number.int64Value)
        case (.float, .number(let number)): GraphQLJSON.text(.number(Number(number.doubleValue)))
        case (.json, _): GraphQLJSON.text(map)
        default: nil
        }
    }
}
