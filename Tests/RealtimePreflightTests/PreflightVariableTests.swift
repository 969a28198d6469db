import BackendNotifier
import Composition
import Foundation
import SubscriberCore
import Testing

@testable import RealtimePreflight

/// Issue 20 item 4: preflight checks the variables of the configured documents by their types in the introspected
/// schema, naming each mismatch.
@Suite("Preflight variable checks")
struct PreflightVariableTests {
    typealias TypeReference = IntrospectedSchema.TypeReference

    /// A legacy server whose subscriptions take scoping arguments.
    static let schema = IntrospectedSchema(
        subscriptionType: "Subscription",
        types: [
            "Subscription": [
                "subscribeRoleChange": .init(
                    name: "subscribeRoleChange", arguments: ["userId": true], type: "RoleChangeOutput",
                    argumentTypes: ["userId": .nonNull(.named("ID"))]),
                "subscribeDeviceState": .init(
                    name: "subscribeDeviceState", arguments: ["orgId": false, "site": false], type: "DeviceStateOutput",
                    argumentTypes: ["orgId": .named("String"), "site": .named("Site")]),
            ],
            "RoleChangeOutput": ["reason": .init(name: "reason", arguments: [:], type: "String")],
            "DeviceStateOutput": ["online": .init(name: "online", arguments: [:], type: "Boolean")],
        ],
        kinds: [
            "Subscription": "OBJECT", "RoleChangeOutput": "OBJECT", "DeviceStateOutput": "OBJECT", "ID": "SCALAR", "String": "SCALAR",
            "Boolean": "SCALAR", "Site": "ENUM", "AWSJSON": "SCALAR",
        ])

    static let supplied: Set<String> = ["userId", "orgId", "organizationId"]

    @Test(
        "each variable mismatch is named; matching declarations pass",
        arguments: [
            ("subscription R($userId: ID!) { subscribeRoleChange(userId: $userId) { reason } }", [String]()),
            ("subscription D($orgId: String) { subscribeDeviceState(orgId: $orgId) { online } }", []),
            // A non-null variable may fill a nullable argument.
            ("subscription D($orgId: String!) { subscribeDeviceState(orgId: $orgId) { online } }", []),
            (
                "subscription R($userId: String!) { subscribeRoleChange(userId: $userId) { reason } }",
                ["variable $userId: declared String!, but Subscription.subscribeRoleChange(userId:) expects ID!"]
            ),
            (
                "subscription R($userId: ID) { subscribeRoleChange(userId: $userId) { reason } }",
                ["variable $userId: declared ID, but Subscription.subscribeRoleChange(userId:) expects ID!"]
            ),
            (
                "subscription D($orgId: Int) { subscribeDeviceState(orgId: $orgId) { online } }",
                [
                    "variable $orgId: Int cannot hold the identity the notifier sends (a string)",
                    "variable $orgId: declared Int, but Subscription.subscribeDeviceState(orgId:) expects String",
                ]
            ),
            (
                "subscription D($orgId: Site) { subscribeDeviceState(site: $orgId) { online } }",
                ["variable $orgId: Site is an enum, which cannot hold a string"]
            ),
            (
                "subscription D($orgId: Colour) { subscribeDeviceState(orgId: $orgId) { online } }",
                [
                    "variable $orgId: Colour is not a type of the schema",
                    "variable $orgId: declared Colour, but Subscription.subscribeDeviceState(orgId:) expects String",
                ]
            ),
            (
                "subscription D($site: String!) { subscribeDeviceState(orgId: $site) { online } }",
                ["variable $site: String! is required, but the notifier supplies only $orgId, $organizationId, $userId"]
            ),
            (
                "subscription R($userId: ID!, $orgId: String) { subscribeRoleChange(userId: $userId) { reason } }",
                ["variable $orgId: declared but not used"]
            ),
            (
                "subscription R { subscribeRoleChange(userId: $userId) { reason } }",
                ["variable $userId: used in Subscription.subscribeRoleChange(userId:) but not declared"]
            ),
            // A custom scalar: the server decides what it accepts.
            (
                "subscription D($orgId: AWSJSON) { subscribeDeviceState(orgId: $orgId) { online } }",
                [
                    "variable $orgId: declared AWSJSON, but Subscription.subscribeDeviceState(orgId:) expects String"
                ]
            ),
        ] as [(String, [String])])
    func variables(document: String, expected: [String]) {
        #expect(Self.schema.problems(of: document, supplied: Self.supplied) == expected)
    }

    @Test("without an organization, a required $orgId is named: the notifier would send none")
    func noOrganization() {
        #expect(
            Self.schema.problems(
                of: "subscription D($orgId: String!) { subscribeDeviceState(orgId: $orgId) { online } }", supplied: ["userId"])
                == ["variable $orgId: String! is required, but the notifier supplies only $userId"])
    }

    @Test("type syntax round-trips, and compatibility follows the specification's rule")
    func typeReferences() throws {
        for text in ["ID", "ID!", "[ID]", "[ID!]!", "[[String]!]"] {
            #expect(TypeReference(parsing: text)?.description == text)
        }
        #expect(TypeReference(parsing: "ID!!") == nil)
        #expect(TypeReference(parsing: "[ID") == nil)
        let nonNullList = try #require(TypeReference(parsing: "[ID!]!"))
        #expect(nonNullList.fits(try #require(TypeReference(parsing: "[ID!]"))))
        #expect(!(try #require(TypeReference(parsing: "[ID]")).fits(nonNullList)))
        #expect(!(try #require(TypeReference(parsing: "ID")).fits(try #require(TypeReference(parsing: "[ID]")))))
    }

    @Test("argument types and type kinds are read from an introspection answer")
    func readsIntrospection() throws {
        let json = #"""
            {"__schema":{"subscriptionType":{"name":"Subscription"},"types":[
              {"name":"Subscription","kind":"OBJECT","fields":[{"name":"subscribeRoleChange","args":[
                {"name":"userId","defaultValue":null,"type":{"kind":"NON_NULL","name":null,"ofType":{"kind":"SCALAR","name":"ID","ofType":null}}}],
                "type":{"kind":"OBJECT","name":"RoleChangeOutput","ofType":null}}]},
              {"name":"RoleChangeOutput","kind":"OBJECT","fields":[{"name":"reason","args":[],"type":{"kind":"SCALAR","name":"String","ofType":null}}]},
              {"name":"ID","kind":"SCALAR","fields":null},{"name":"String","kind":"SCALAR","fields":null}]}}
            """#
        let data = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let schema = try IntrospectedSchema(data: data)
        #expect(schema.types["Subscription"]?["subscribeRoleChange"]?.argumentTypes["userId"] == .nonNull(.named("ID")))
        #expect(schema.kinds["ID"] == "SCALAR")
        #expect(
            schema.problems(of: "subscription($userId: String!) { subscribeRoleChange(userId: $userId) { reason } }", supplied: ["userId"])
                == ["variable $userId: declared String!, but Subscription.subscribeRoleChange(userId:) expects ID!"])
    }

    @Test("preflight supplies the variables the notifier would: the organization's only with an organization")
    func suppliedVariables() {
        var configuration = RealtimeConfiguration()
        configuration.graphQLEndpoint = "ws://127.0.0.1:1/graphql"
        let auth = StaticAuthSession(.bearerToken("t"))
        #expect(
            RealtimePreflight(configuration: configuration, auth: auth, userId: "u", organizationId: "o").suppliedVariables == [
                "userId", "orgId", "organizationId",
            ])
        #expect(
            RealtimePreflight(configuration: configuration, auth: auth, userId: "u", organizationId: nil).suppliedVariables == ["userId"])
    }
}
