import BackendNotifier
import Foundation
import SubscriberCore
import Testing

@testable import Composition

/// Issue 21 item 3: one declaration per setting, from which the file and environment sources, validation and the
/// reference in `docs/configuration.md` all come.
@Suite("RealtimeSettingsTable")
struct RealtimeSettingsTableTests {
    static let appsync = "https://abc.appsync-api.us-east-1.amazonaws.com/event"

    /// The package root: this file is `Tests/CompositionTests/…`.
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test("docs/configuration.md holds the reference generated from the table")
    func documentationMatchesTheTable() throws {
        let path = Self.packageRoot.appendingPathComponent("docs/configuration.md")
        let document = try String(contentsOf: path, encoding: .utf8)
        let documented = try #require(
            RealtimeSettingsTable.documentedReference(in: document),
            "docs/configuration.md lacks \(RealtimeSettingsTable.referenceBegin) … \(RealtimeSettingsTable.referenceEnd)")
        let expected = RealtimeSettingsTable.markdownReference()
        if documented != expected {
            let documentedLines = documented.split(separator: "\n", omittingEmptySubsequences: false)
            let expectedLines = expected.split(separator: "\n", omittingEmptySubsequences: false)
            let differing =
                zip(documentedLines, expectedLines).enumerated().first { $0.element.0 != $0.element.1 }
                .map { "first difference at line \($0.offset + 1):\n  documented: \($0.element.0)\n  expected:   \($0.element.1)" }
                ?? "the documented table has \(documentedLines.count) lines, the generated one \(expectedLines.count)"
            Issue.record(
                """
                docs/configuration.md differs from RealtimeSettingsTable (run `swift run vortex-realtime settings --write \
                docs/configuration.md`); \(differing)
                expected text between the markers:
                \(expected)
                """)
        }
    }

    @Test("the table declares every stored property of RealtimeConfiguration once, with a distinct variable")
    func tableCoversTheConfiguration() throws {
        var full = RealtimeConfiguration()
        full.appSyncEndpoint = Self.appsync
        full.graphQLEndpoint = "wss://api.example.com/graphql"
        full.apiKey = "k"
        full.graphQLOperations = [:]
        full.graphQLConnectionPayload = "{}"
        let encoded = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(full)) as? [String: Any])
        var codedKeys: Set<String> = []
        for (key, value) in encoded {
            if let nested = value as? [String: Any], RealtimeSettingsTable.groups.contains(key) {
                codedKeys.formUnion(nested.keys.map { "\(key).\($0)" })
            } else {
                codedKeys.insert(key)
            }
        }
        let keys = RealtimeSettingsTable.settings.map(\.key)
        #expect(Set(keys) == codedKeys)
        #expect(Set(keys).count == keys.count, "a key declared twice")
        let variables = RealtimeSettingsTable.settings.compactMap(\.environmentVariable)
        #expect(Set(variables).count == variables.count, "a variable declared twice")
        #expect(variables.allSatisfy { $0.hasPrefix(RealtimeSettingsTable.environmentPrefix) })
        for old in RealtimeSettingsTable.replaced {
            #expect(RealtimeSettingsTable.setting(forKey: old.replacement) != nil, "\(old.key) names no setting")
            #expect(!keys.contains(old.key) && !variables.contains(old.environmentVariable))
        }
        for setting in RealtimeSettingsTable.settings {
            #expect(!setting.doc.contains("|") && !setting.doc.contains("\n"), "\(setting.key): its doc line breaks the table")
        }
        // The defaults pass the table's own checks.
        #expect(RealtimeSettingsTable.settings.flatMap { $0.validate(RealtimeConfiguration()) } == [])
    }

    @Test("what RealtimeConfiguration encodes, applyingJSON reads back (the table and Codable agree)")
    func codableRoundTrip() throws {
        var configuration = RealtimeConfiguration()
        configuration.transport = .graphql
        configuration.appSyncEndpoint = Self.appsync
        configuration.graphQLEndpoint = "wss://api.example.com/graphql"
        configuration.authMode = .apiKey
        configuration.apiKey = "k"
        configuration.reconnect = "fixed:2"
        configuration.ackTimeoutSeconds = 7.5
        configuration.maxConnectionDurationSeconds = 3600
        configuration.liveness.quietPeriodSeconds = 12
        configuration.liveness.pongTimeoutSeconds = 4
        configuration.liveness.probeTimeoutSeconds = 1.5
        configuration.liveness.webSocketPings = false
        configuration.bufferLimit = 77
        configuration.bufferOverflow = .dropNewest
        configuration.backgroundGraceSeconds = 0
        configuration.switchTimeoutSeconds = 9
        configuration.networkErrorAfterSeconds = 33
        configuration.graphQLOperations = ["role": .init(query: "subscription { r }", operationName: "R")]
        configuration.graphQLConnectionPayload = #"{"a":"${token}"}"#
        configuration.failover.enabled = true
        configuration.failover.unhealthyAfterSeconds = 5
        configuration.failover.maxFailures = 2
        configuration.failover.failureWindowSeconds = 50
        configuration.failover.failbackAfterSeconds = 500
        let read = try RealtimeConfiguration().applyingJSON(JSONEncoder().encode(configuration))
        #expect(read == configuration)
        try read.validate()
    }

    @Test(
        "a file and the environment give each kind of setting the same value",
        arguments: [
            ("transport", "GraphQL", #""graphql""#),
            ("authMode", "apikey", #""apiKey""#),
            ("bufferOverflow", "dropNewest", #""dropNewest""#),
            ("ackTimeoutSeconds", "2.5", "2.5"),
            ("maxConnectionDurationSeconds", "0", "null"),
            ("liveness.quietPeriodSeconds", "0", "null"),
            ("liveness.quietPeriodSeconds", "20", "20"),
            ("liveness.webSocketPings", "off", "false"),
            ("failover.enabled", "ON", "true"),
            ("bufferLimit", "12", "12"),
            ("failover.maxFailures", "3", "3"),
            ("reconnect", "fixed:3", #""fixed:3""#),
            ("graphQLEndpoint", "wss://x.example.com/graphql", #""wss://x.example.com/graphql""#),
            ("graphQLConnectionPayload", #"{"a":"${token}"}"#, #"{"a":"${token}"}"#),
        ])
    func sourcesAgree(key: String, environmentText: String, json: String) throws {
        let setting = try #require(RealtimeSettingsTable.setting(forKey: key))
        let variable = try #require(setting.environmentVariable)
        let fromEnvironment = try RealtimeConfiguration().applyingEnvironment([variable: environmentText])
        let parts = key.split(separator: ".").map(String.init)
        let object = parts.count == 2 ? #"{"\#(parts[0])":{"\#(parts[1])":\#(json)}}"# : #"{"\#(key)":\#(json)}"#
        let fromFile = try RealtimeConfiguration().applyingJSON(Data(object.utf8))
        #expect(fromEnvironment == fromFile)
        #expect(fromFile != RealtimeConfiguration(), "each sample differs from the default")
    }

    @Test(
        "a value of the wrong kind is an error naming the variable and what is expected, never a default",
        arguments: [
            (["VORTEX_REALTIME_BUFFER_LIMIT": "1.5"], "VORTEX_REALTIME_BUFFER_LIMIT=1.5: not a whole number"),
            (["VORTEX_REALTIME_BUFFER_LIMIT": "1e30"], "VORTEX_REALTIME_BUFFER_LIMIT=1e30: not a whole number"),
            (["VORTEX_REALTIME_FAILOVER_MAX_FAILURES": "many"], "VORTEX_REALTIME_FAILOVER_MAX_FAILURES=many: not a whole number"),
            (["VORTEX_REALTIME_ACK_TIMEOUT": "soon"], "VORTEX_REALTIME_ACK_TIMEOUT=soon: not a non-negative number"),
            (["VORTEX_REALTIME_ACK_TIMEOUT": "inf"], "VORTEX_REALTIME_ACK_TIMEOUT=inf: not a non-negative number"),
            (["VORTEX_REALTIME_BUFFER_OVERFLOW": "dropAll"], "VORTEX_REALTIME_BUFFER_OVERFLOW=dropAll: expected dropOldest or dropNewest"),
            (["VORTEX_REALTIME_AUTH_MODE": "iam"], "VORTEX_REALTIME_AUTH_MODE=iam: expected session or apiKey"),
            (["VORTEX_REALTIME_FAILOVER": "maybe"], "VORTEX_REALTIME_FAILOVER=maybe: expected on or off"),
            (["VORTEX_REALTIME_TRANSPROT": "graphql"], "VORTEX_REALTIME_TRANSPROT: unknown variable"),
            (
                ["VORTEX_REALTIME_GRAPHQL_PONG_TIMEOUT": "5"],
                "VORTEX_REALTIME_GRAPHQL_PONG_TIMEOUT: replaced by VORTEX_REALTIME_PONG_TIMEOUT (for both transports)"
            ),
        ] as [([String: String], String)])
    func environmentKindErrors(environment: [String: String], problem: String) {
        #expect(throws: ConfigurationError.self) { try RealtimeConfiguration().applyingEnvironment(environment) }
        do { _ = try RealtimeConfiguration().applyingEnvironment(environment) } catch {
            #expect(error.problems.contains { $0.hasPrefix(problem) }, "\(error.problems) lacks \(problem)")
        }
    }

    @Test(
        "a file value of the wrong kind is an error naming the key and what is expected",
        arguments: [
            (#"{"bufferLimit":1.5}"#, #"JSON: "bufferLimit" has the wrong type or value (expected a whole number)"#),
            (#"{"ackTimeoutSeconds":"15"}"#, #"JSON: "ackTimeoutSeconds" has the wrong type or value (expected a number of seconds)"#),
            (#"{"failover":{"enabled":"on"}}"#, #"JSON: "failover.enabled" has the wrong type or value (expected true or false)"#),
            (#"{"transport":"mqtt"}"#, #"JSON: "transport" has the wrong type or value (expected "appsync" or "graphql")"#),
            (#"{"liveness":5}"#, #"JSON: "liveness" has the wrong type or value (expected an object)"#),
            (#"{"reconnect":null}"#, #"JSON: "reconnect" has the wrong type or value"#),
            (#"{"graphQLOperations":{"role":5}}"#, #"JSON: "graphQLOperations" has the wrong type or value"#),
        ])
    func fileKindErrors(json: String, problem: String) {
        do {
            _ = try RealtimeConfiguration().applyingJSON(Data(json.utf8))
            Issue.record("accepted \(json)")
        } catch {
            #expect(error.problems.contains { $0.hasPrefix(problem) }, "\(error.problems) lacks \(problem)")
        }
    }

    @Test("every bound comes from the table and is reported by validate(), naming the key")
    func bounds() {
        var configuration = RealtimeConfiguration()
        configuration.appSyncEndpoint = Self.appsync
        configuration.ackTimeoutSeconds = 0
        configuration.maxConnectionDurationSeconds = 30
        configuration.liveness.quietPeriodSeconds = 100_000
        configuration.bufferLimit = 0
        configuration.backgroundGraceSeconds = -1
        configuration.switchTimeoutSeconds = .infinity
        configuration.failover.failureWindowSeconds = 0  // checked even while failover is off
        configuration.failover.maxFailures = 0
        configuration.graphQLEndpoint = "http://example.com/graphql"  // set, so checked though unused
        do {
            try configuration.validate()
            Issue.record("validate() accepted out-of-bounds values")
        } catch {
            #expect(
                error.problems == [
                    #"graphQLEndpoint: invalid endpoint: http://example.com/graphql: expected wss:// (or ws:// on loopback)"#,
                    "ackTimeoutSeconds: must be above 0 and at most 86400",
                    "maxConnectionDurationSeconds: at least 60 and at most 86400 (or null: never rotate)",
                    "liveness.quietPeriodSeconds: must be above 0 and at most 86400 (or null: never ping)",
                    "bufferLimit: at least 1",
                    "backgroundGraceSeconds: at least 0 and at most 86400",
                    "switchTimeoutSeconds: must be above 0 and at most 86400",
                    "failover.maxFailures: at least 1",
                    "failover.failureWindowSeconds: must be above 0 and at most 86400",
                ])
        }
    }

    @Test("the reference shows each default from RealtimeConfiguration() and the kind's rule")
    func referenceRows() throws {
        let reference = RealtimeSettingsTable.markdownReference()
        #expect(reference.contains("| `ackTimeoutSeconds` | `VORTEX_REALTIME_ACK_TIMEOUT` | `15` |"))
        #expect(reference.contains("| `liveness.webSocketPings` | `VORTEX_REALTIME_WEBSOCKET_PINGS` (`on`/`off`) | `true` |"))
        #expect(reference.contains("| `graphQLOperations` | — (file or code) | none: the default documents |"))
        #expect(reference.contains("Seconds, at least 60 and at most 86400; `null` (`0` in the environment): never rotate."))
        #expect(
            reference.contains("`graphQLPingIntervalSeconds` (`VORTEX_REALTIME_GRAPHQL_PING_INTERVAL`) by `liveness.quietPeriodSeconds`"))
        let begin = RealtimeSettingsTable.referenceBegin
        let end = RealtimeSettingsTable.referenceEnd
        #expect(
            RealtimeSettingsTable.updatingReference(in: "prose\n\(begin)\nold table\n\(end)\nmore prose\n")
                == "prose\n\(begin)\n\(reference)\(end)\nmore prose\n")
        #expect(RealtimeSettingsTable.updatingReference(in: "no markers") == nil)
        let setting = try #require(RealtimeSettingsTable.setting(forKey: "bufferLimit"))
        #expect(setting.defaultText == "`1024`" && setting.kind == .integer)
    }
}
