import BackendNotifier
import Foundation
import RealtimeTesting
import SubscriberCore
import Testing

@testable import Composition

/// Issue 20 item 4: the GraphQL `connection_init` payload shape from the configuration file and the environment.
@Suite("graphQLConnectionPayload template")
struct ConnectionPayloadTemplateTests {
    typealias Template = RealtimeConfiguration.ConnectionPayloadTemplate

    @Test(
        "placeholders are filled from the credentials, escaped as JSON",
        arguments: [
            (#"{"Authorization":"${token}"}"#, AuthCredentials.bearerToken("jwt.a.b"), #"{"Authorization":"jwt.a.b"}"#),
            (
                #"{"headers":{"Authorization":"Bearer ${token}"}}"#, .lambdaToken("lambda-1"),
                #"{"headers":{"Authorization":"Bearer lambda-1"}}"#
            ),
            (#"{"x-api-key":"${apiKey}","v":2,"ok":true}"#, .apiKey("da2-key"), #"{"ok":true,"v":2,"x-api-key":"da2-key"}"#),
            (#"{"Authorization":"${token}"}"#, .bearerToken(#"we"ird\"#), #"{"Authorization":"we\"ird\\"}"#),
            (#"{"list":["${token}","${token}"]}"#, .bearerToken("t"), #"{"list":["t","t"]}"#),
        ] as [(String, AuthCredentials, String)])
    func render(template: String, credentials: AuthCredentials, expected: String) throws {
        let rendered = try Template(template).render(credentials)
        #expect(rendered.json == expected)
        #expect(rendered.unfilled.isEmpty)
    }

    @Test("a placeholder the credentials cannot fill is reported by name and sent empty, never made up")
    func unfilled() throws {
        let template = try Template(#"{"Authorization":"${token}","x-api-key":"${apiKey}"}"#)
        #expect(template.usedPlaceholders == ["apiKey", "token"])
        let rendered = template.render(.bearerToken("t"))
        #expect(rendered.json == #"{"Authorization":"t","x-api-key":""}"#)
        #expect(rendered.unfilled == ["apiKey"])
    }

    @Test(
        "a bad template is refused with a problem that says what is wrong and where",
        arguments: [
            ("Authorization: ${token}", "not JSON"),
            (#"["${token}"]"#, "must be a JSON object"),
            (#"{"Authorization":"${tokn}"}"#, "Authorization: unknown placeholder ${tokn} (known: ${token}, ${apiKey})"),
            (#"{"headers":{"Authorization":"Bearer ${token"}}"#, "headers.Authorization: an unterminated \"${\""),
            (#"{"${token}":"x"}"#, "${token}: a placeholder in a member name"),
        ])
    func refused(template: String, problem: String) {
        #expect(throws: ConfigurationError.self) { try Template(template) }
        do { _ = try Template(template) } catch {
            #expect(error.problems.contains { $0.contains(problem) }, "\(error.problems) lacks \(problem)")
        }
    }

    @Test("from a file as an object or as JSON text; a bad one names the file and the key; validate() names the key")
    func fromFile() throws {
        let base = #""transport":"graphql","graphQLEndpoint":"ws://127.0.0.1:1/graphql""#
        let object = try RealtimeConfiguration().applyingJSON(
            Data(#"{\#(base),"graphQLConnectionPayload":{"headers":{"Authorization":"Bearer ${token}"}}}"#.utf8))
        #expect(try object.connectionPayloadTemplate()?.render(.bearerToken("t")).json == #"{"headers":{"Authorization":"Bearer t"}}"#)
        let text = try RealtimeConfiguration().applyingJSON(
            Data(#"{\#(base),"graphQLConnectionPayload":"{\"Authorization\":\"${token}\"}"}"#.utf8))
        #expect(try text.connectionPayloadTemplate()?.render(.bearerToken("t")).json == #"{"Authorization":"t"}"#)
        do {
            _ = try RealtimeConfiguration().applyingJSON(
                Data(#"{\#(base),"graphQLConnectionPayload":{"Authorization":"${jwt}"}}"#.utf8), source: "file app.json")
            Issue.record("a bad template passed")
        } catch {
            #expect(
                error.problems == [
                    "file app.json: graphQLConnectionPayload: Authorization: unknown placeholder ${jwt} (known: ${token}, ${apiKey})"
                ])
        }
        do {
            _ = try RealtimeConfiguration().applyingJSON(Data(#"{\#(base),"graphQLConnectionPayload":7}"#.utf8))
            Issue.record("a number passed as a template")
        } catch {
            #expect(error.problems.first?.contains("\"graphQLConnectionPayload\" has the wrong type") == true, "\(error.problems)")
        }
        var configuration = text
        configuration.graphQLConnectionPayload = "[]"
        #expect(throws: ConfigurationError(["graphQLConnectionPayload: must be a JSON object such as {\"Authorization\":\"${token}\"}"])) {
            try configuration.validate()
        }
    }

    @Test("from the environment; a bad one names the variable and does not echo it")
    func fromEnvironment() throws {
        let environment = [
            "VORTEX_REALTIME_TRANSPORT": "graphql", "VORTEX_REALTIME_GRAPHQL_ENDPOINT": "ws://127.0.0.1:1/graphql",
            "VORTEX_REALTIME_GRAPHQL_CONNECTION_PAYLOAD": #"{"authToken":"${token}"}"#,
        ]
        let loaded = try RealtimeConfiguration.load(environment: environment)
        #expect(loaded.graphQLConnectionPayload == #"{"authToken":"${token}"}"#)
        var bad = environment
        bad["VORTEX_REALTIME_GRAPHQL_CONNECTION_PAYLOAD"] = #"{"authToken":"secret-${oops}"}"#
        do {
            _ = try RealtimeConfiguration.load(environment: bad)
            Issue.record("a bad template passed")
        } catch {
            #expect(
                error.problems.contains(
                    "VORTEX_REALTIME_GRAPHQL_CONNECTION_PAYLOAD: authToken: unknown placeholder ${oops} (known: ${token}, ${apiKey})"))
            #expect(!error.description.contains("secret-"))
        }
    }

    @Test("the GraphQL transport the factory builds sends the template's shape in connection_init")
    func factorySendsTheTemplate() async throws {
        var configuration = RealtimeConfiguration()
        configuration.transport = .graphql
        configuration.graphQLEndpoint = "ws://127.0.0.1:9/graphql"
        configuration.graphQLConnectionPayload = #"{"headers":{"Authorization":"Bearer ${token}"}}"#
        let server = ScriptedWebSocketServer()
        let transport = try TransportFactory(
            configuration: configuration, auth: ScriptedAuthSession(.bearerToken("jwt-1")), connector: server
        )
        .make(.graphql)
        let stream = await transport.subscribe(.graphQL(GraphQLOperation(query: "subscription { subscribeRoleChange { reason } }")))
        let consumer = Task { for try await _ in stream {} }
        let connection = try await server.nextConnection()
        let initMessage = try await connection.nextSentJSON()
        #expect(initMessage["type"] as? String == "connection_init")
        let payload = try #require(initMessage["payload"] as? [String: Any])
        #expect((payload["headers"] as? [String: Any])?["Authorization"] as? String == "Bearer jwt-1")
        #expect(payload["Authorization"] == nil)
        consumer.cancel()
        await transport.disconnect()
    }
}
