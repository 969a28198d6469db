import BackendNotifier
import Foundation
import RealtimeDrill
import SubscriberCore
import Testing

/// The shadow parity's matching logic (``ParityMatcher``, ``EventMatcher``), case by case, without sockets.
@Suite("Parity matcher")
struct ParityMatcherTests {
    static let t0 = Date(timeIntervalSince1970: 1_750_000_000)

    /// An event of `stream` about `entity`, stamped `stamp` seconds after t0, arriving `arrival` seconds after t0.
    static func event(
        _ stream: String = "devicePresence", entity: String = "device:cam-1", stamp: Double? = 10, arrival: Double = 10.01,
        fields: [String: JSONValue] = ["online": true, "thingName": "cam-1"]
    ) -> ObservedEvent {
        var value = fields
        let timestamp = stamp.map { ISO8601Timestamp.string(from: t0.addingTimeInterval($0), fractionalSeconds: true) }
        if let timestamp { value["timestamp"] = .string(timestamp) }
        return ObservedEvent(
            stream: stream, entity: entity, timestamp: timestamp, arrivedAt: t0.addingTimeInterval(arrival), value: .object(value))
    }

    static func gap(_ kind: String, stream: String?, transport: String, from start: Double, to end: Double) -> ReportedGap {
        ReportedGap(
            kind: kind, stream: stream, transport: transport,
            window: GapWindow(start: t0.addingTimeInterval(start), end: t0.addingTimeInterval(end)))
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var appsync: [ObservedEvent]
        var graphql: [ObservedEvent]
        var appSyncGaps: [ReportedGap] = []
        var graphQLGaps: [ReportedGap] = []
        /// matched, onlyAppSync, onlyGraphQL, different, insideGaps, atEdges
        var expected: [Int]
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "the same event on both sides matches", appsync: [event()], graphql: [event(arrival: 10.2)], expected: [1, 0, 0, 0, 0, 0]),
        Case(
            name: "timestamps 1.5 s apart match within the default 2 s tolerance",
            appsync: [event(stamp: 10)], graphql: [event(stamp: 11.5, arrival: 11.6)], expected: [1, 0, 0, 0, 0, 0]),
        Case(
            name: "timestamps 2.5 s apart are two one-sided events",
            appsync: [event(stamp: 10)], graphql: [event(stamp: 12.5, arrival: 12.6)], expected: [0, 1, 1, 0, 0, 0]),
        Case(
            name: "without timestamps, arrivals within the tolerance match",
            appsync: [event(stamp: nil, arrival: 10)], graphql: [event(stamp: nil, arrival: 11)], expected: [1, 0, 0, 0, 0, 0]),
        Case(
            name: "a field that differs is a difference, not a match",
            appsync: [event()], graphql: [event(fields: ["online": false, "thingName": "cam-1"])], expected: [0, 0, 0, 1, 0, 0]),
        Case(
            name: "a field present on one side only is a difference",
            appsync: [event(fields: ["online": true, "thingName": "cam-1", "mac": "AA"])], graphql: [event()], expected: [0, 0, 0, 1, 0, 0]),
        Case(
            name: "optional metadata (eventType, orgId, siteId) missing on one side is no difference",
            appsync: [
                event(fields: [
                    "online": true, "thingName": "cam-1", "eventType": "device/presenceChanged", "orgId": "o-7", "siteId": "g-7",
                ])
            ],
            graphql: [event()], expected: [1, 0, 0, 0, 0, 0]),
        Case(
            name: "optional metadata present on both sides must agree",
            appsync: [event(fields: ["online": true, "thingName": "cam-1", "orgId": "o-7"])],
            graphql: [event(fields: ["online": true, "thingName": "cam-1", "orgId": "o-8"])], expected: [0, 0, 0, 1, 0, 0]),
        Case(
            name: "another entity is another event",
            appsync: [event(entity: "device:cam-1")], graphql: [event(entity: "device:cam-2")], expected: [0, 1, 1, 0, 0, 0]),
        Case(
            name: "another kind is another event", appsync: [event("devicePresence")], graphql: [event("deviceRecording")],
            expected: [0, 1, 1, 0, 0, 0]),
        Case(
            name: "a one-sided AppSync event is a mismatch", appsync: [event(), event(stamp: 20, arrival: 20)], graphql: [event()],
            expected: [1, 1, 0, 0, 0, 0]),
        Case(
            name: "a one-sided GraphQL event is a mismatch", appsync: [], graphql: [event()], expected: [0, 0, 1, 0, 0, 0]),
        Case(
            name: "an AppSync-only event inside a gap GraphQL reported is listed apart",
            appsync: [event()], graphql: [], graphQLGaps: [gap("resumed", stream: "device", transport: "graphql", from: 9, to: 11)],
            expected: [0, 0, 0, 0, 1, 0]),
        Case(
            name: "an AppSync-only event inside a gap AppSync itself reported is still a mismatch",
            appsync: [event()], graphql: [], appSyncGaps: [gap("resumed", stream: "device", transport: "appsync", from: 9, to: 11)],
            expected: [0, 1, 0, 0, 0, 0]),
        Case(
            name: "a gap of another upstream explains nothing",
            appsync: [event()], graphql: [], graphQLGaps: [gap("resumed", stream: "organization", transport: "graphql", from: 9, to: 11)],
            expected: [0, 1, 0, 0, 0, 0]),
        Case(
            name: "an eventsLost window of the stream itself explains a GraphQL-only event",
            appsync: [], graphql: [event()],
            appSyncGaps: [gap("eventsLost", stream: "devicePresence", transport: "appsync", from: 9.5, to: 10.5)],
            expected: [0, 0, 0, 0, 1, 0]),
        Case(
            name: "an event just after a gap is a mismatch",
            appsync: [event(stamp: 12, arrival: 12)], graphql: [],
            graphQLGaps: [gap("resumed", stream: "device", transport: "graphql", from: 9, to: 11)], expected: [0, 1, 0, 0, 0, 0]),
        Case(
            name: "a difference inside either side's gap is listed apart",
            appsync: [event()], graphql: [event(fields: ["online": false, "thingName": "cam-1"])],
            appSyncGaps: [gap("resumed", stream: nil, transport: "appsync", from: 9, to: 11)], expected: [0, 0, 0, 0, 1, 0]),
        Case(
            name: "an unpaired event before the run started is not judged",
            appsync: [event(stamp: 0.5, arrival: 0.5)], graphql: [], expected: [0, 0, 0, 0, 0, 1]),
        Case(
            name: "a pair that arrived entirely before the run is dropped",
            appsync: [event(stamp: 0.5, arrival: 0.5)], graphql: [event(stamp: 0.5, arrival: 0.6)], expected: [0, 0, 0, 0, 0, 0]),
        Case(
            name: "a pair that landed while the run settled belongs to the run",
            appsync: [event(stamp: 99.9, arrival: 100.2)], graphql: [event(stamp: 99.9, arrival: 100.4)], expected: [1, 0, 0, 0, 0, 0]),
        Case(
            name: "an unpaired event after the run ended is not judged",
            appsync: [event(stamp: 100.5, arrival: 100.5)], graphql: [], expected: [0, 0, 0, 0, 0, 1]),
        Case(
            name: "a pair that straddles the start is matched",
            appsync: [event(stamp: 0.9, arrival: 0.9)], graphql: [event(stamp: 0.9, arrival: 1.1)], expected: [1, 0, 0, 0, 0, 0]),
        Case(
            name: "two events, each matched with its nearest counterpart",
            appsync: [event(stamp: 10, arrival: 10), event(stamp: 11, arrival: 11)],
            graphql: [event(stamp: 11, arrival: 11.1), event(stamp: 10, arrival: 10.1)], expected: [2, 0, 0, 0, 0, 0]),
    ]

    @Test("match, mismatch, tolerance and gap cases", arguments: cases)
    func judge(_ testCase: Case) {
        let report = ParityMatcher(tolerance: 2).judge(
            appsync: testCase.appsync, graphql: testCase.graphql, appSyncGaps: testCase.appSyncGaps, graphQLGaps: testCase.graphQLGaps,
            start: Self.t0.addingTimeInterval(1), end: Self.t0.addingTimeInterval(100))
        let counts = [report.matched, report.onlyAppSync, report.onlyGraphQL, report.different, report.insideGaps, report.atEdges]
        #expect(counts == testCase.expected)
        #expect(report.passed == (testCase.expected[1] + testCase.expected[2] + testCase.expected[3] == 0))
    }

    @Test("the paired events keep their differing fields, and arrival differences are measured GraphQL minus AppSync")
    func details() {
        let report = ParityMatcher(tolerance: 2).judge(
            appsync: [
                Self.event(arrival: 10),
                Self.event("plan", entity: "organization:o-1", stamp: 30, arrival: 30, fields: ["isFreePlan": true]),
            ],
            graphql: [
                Self.event(arrival: 10.25),
                Self.event("plan", entity: "organization:o-1", stamp: 30, arrival: 30.1, fields: ["isFreePlan": false]),
            ],
            appSyncGaps: [], graphQLGaps: [], start: Self.t0, end: Self.t0.addingTimeInterval(100))
        #expect(report.events.different.first?.fields == ["isFreePlan"])
        #expect(abs((report.arrivalDifferenceMilliseconds?.p50 ?? 0) - 250) < 1)
        #expect(abs((report.arrivalDifferenceMilliseconds?.medianGraphQLMinusAppSync ?? 0) - 250) < 1)
    }

    @Test("the JSON has the counts at the top, gaps per side, and the events under events")
    func jsonShape() throws {
        let report = ParityMatcher(tolerance: 2).judge(
            appsync: [Self.event(), Self.event(stamp: 40, arrival: 40)], graphql: [Self.event()], appSyncGaps: [],
            graphQLGaps: [Self.gap("resumed", stream: "role", transport: "graphql", from: 50, to: 52)], start: Self.t0,
            end: Self.t0.addingTimeInterval(100))
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let object = try #require(try JSONSerialization.jsonObject(with: encoder.encode(report)) as? [String: Any])
        #expect(object["matched"] as? Int == 1)
        #expect(object["onlyAppSync"] as? Int == 1)
        #expect(object["onlyGraphQL"] as? Int == 0)
        #expect(object["different"] as? Int == 0)
        #expect(object["passed"] as? Bool == false)
        #expect(object["gaps"] as? [String: Int] == ["appsync": 0, "graphql": 1])
        let events = try #require(object["events"] as? [String: Any])
        #expect((events["onlyAppSync"] as? [[String: Any]])?.first?["stream"] as? String == "devicePresence")
        #expect((events["matched"] as? [[String: Any]])?.count == 1)
        #expect(((events["gaps"] as? [String: Any])?["graphql"] as? [[String: Any]])?.first?["milliseconds"] as? Int == 2000)
        let decoded = try JSONDecoder().decode(ShadowParityReport.self, from: encoder.encode(report))
        #expect(try encoder.encode(decoded) == encoder.encode(report))
    }

    @Test("a value of the notifier's public model is normalised: entity by kind, timestamp apart, unknown streams refused")
    func normalisation() throws {
        let presence = try #require(
            ObservedEvent(
                stream: "devicePresence", json: #"{"mac":"AA","online":true,"thingName":"cam-9","timestamp":"2025-01-01T00:00:00.000Z"}"#,
                arrivedAt: Self.t0, userId: "u-7", organizationId: "o-7"))
        #expect(presence.entity == "device:cam-9")
        #expect(presence.fields["timestamp"] == nil && presence.fields["online"] == true)
        #expect(
            ObservedEvent(stream: "plan", json: #"{"isFreePlan":true}"#, arrivedAt: Self.t0, userId: "u-7", organizationId: "o-7")?.entity
                == "organization:o-7")
        #expect(
            ObservedEvent(stream: "role", json: #"{"reason":"x"}"#, arrivedAt: Self.t0, userId: "u-7", organizationId: nil)?.entity
                == "user:u-7")
        #expect(
            ObservedEvent(
                stream: "revoke", json: #"{"userId":"u-8","revokedAt":"x"}"#, arrivedAt: Self.t0, userId: "u-7", organizationId: nil)?
                .entity
                == "user:u-8")
        #expect(ObservedEvent(stream: "device", json: #"{"online":true}"#, arrivedAt: Self.t0, userId: "u-7", organizationId: nil) == nil)
    }
}
