import GraphQL
import Logging
import RealtimeTesting
import SubscriberCore
import Testing

@testable import LocalBackend

/// The local backend writes a plain selection's `next` straight from the event (``LegacySelectionPlan``); these tests
/// hold it to GraphQLSwift's own execution of the same document on the same event, byte for byte.
@Suite("Legacy selection plan: the same next messages as GraphQLSwift")
struct LegacySelectionPlanTests {
    /// A subscription document and the operation to run.
    struct Operation: Sendable, CustomTestStringConvertible {
        var query: String
        var operationName: String?
        var testDescription: String { operationName ?? String(query.prefix(60)) }
    }

    /// The five operations the notifier sends, with their variables.
    static let notifierOperations: [(document: Operation, variables: [String: Map])] = NotifierLegacyOperations.Upstream.allCases.map {
        upstream in
        let argument = upstream == .role || upstream == .revoke ? "u-1" : "o-1"
        let operation = NotifierLegacyOperations.operation(for: upstream, argument: argument)
        let name = upstream == .role || upstream == .revoke ? "userId" : "orgId"
        return (Operation(query: operation.query, operationName: operation.operationName), [name: .string(argument)])
    }

    /// Plain selections beyond the notifier's: aliases, `__typename`, partial nested selections, a chosen operation.
    static let otherOperations: [Operation] = [
        Operation(query: "subscription { d: subscribeDeviceState { on: online mac t: __typename fw: fwUpdateState online } }"),
        Operation(
            query: "subscription { subscribeOrganizationState { AIControlSetting { options uuid __typename } o: orgId isFreePlan } }"),
        Operation(query: "subscription { subscribeArchiveState { videoLength videoSize cloudSize hasH265 status createdAt } }"),
        Operation(
            query: "subscription A { subscribeRoleChange { reason } } subscription B { subscribeUserTokenRevoke { revokedAt userId } }",
            operationName: "B"),
    ]

    static func mapper(_ document: Operation, variables: [String: Map] = [:]) throws -> LegacyResponseMapper {
        let bus = EventBus(directory: .sample, hub: ChannelHub(), logger: Logger(label: "test"))
        return LegacyResponseMapper(
            id: "op-1", schema: try LegacyGraphQLSchema.make(), document: try parse(source: document.query),
            context: LegacyGraphQLContext(userID: "u-1", bus: bus), variables: variables, operationName: document.operationName)
    }

    /// Checks the plan's message against GraphQLSwift's for `event`; returns whether the plan wrote it.
    @discardableResult
    static func check(_ mapper: LegacyResponseMapper, _ event: DomainEvent, _ comment: Comment? = nil) async throws -> Bool {
        let source = LegacyEventSource(event)
        // (GraphQLSwift's field errors come in completion order, so only a result the plan writes is compared.)
        let expected = GraphQLServerMessage.next(id: mapper.id, try await mapper.execute(source))
        guard let data = mapper.plan?.data(for: source) else { return false }
        let message = GraphQLServerMessage.next(id: mapper.id, data: data)
        #expect(message == expected, comment)
        #expect(try await mapper.message(for: source) == message, "the mapper sends what the plan writes")
        return true
    }

    static var samples: [DomainEvent] {
        GraphQLSamples.events(orgId: "o-1", deviceGroupId: "g-1", userId: "u-1")
    }

    @Test("the notifier's documents compile, and every kind of event is written as GraphQLSwift writes it")
    func notifierSelections() async throws {
        for (upstream, (document, variables)) in zip(NotifierLegacyOperations.Upstream.allCases, Self.notifierOperations) {
            let mapper = try Self.mapper(document, variables: variables)
            #expect(mapper.plan != nil, "\(document.testDescription) is a plain selection")
            for event in Self.samples {
                let written = try await Self.check(mapper, event, "\(document.testDescription), \(event.kind)")
                // Another topic's event may lack a non-null field (a revocation's `revokedAt`); its own never does.
                if NotifierLegacyOperations.upstream(for: event.kind) == upstream {
                    #expect(written, "\(event.kind) on its own operation is written by the plan")
                }
            }
        }
    }

    @Test("aliases, __typename, partial nested selections and a chosen operation", arguments: otherOperations)
    func plainSelections(_ document: Operation) async throws {
        let mapper = try Self.mapper(document)
        #expect(mapper.plan != nil)
        var written = 0
        for event in Self.samples where try await Self.check(mapper, event, "\(event.kind)") {
            written += 1
        }
        #expect(written > 0)
    }

    @Test(
        "fragments, directives, repeated keys and unknown operations are left to GraphQLSwift",
        arguments: [
            "subscription { subscribeDeviceState { ...F } } fragment F on DeviceStateOutput { mac }",
            "subscription { subscribeDeviceState { ... on DeviceStateOutput { mac } } }",
            "subscription { subscribeDeviceState { mac @include(if: true) } }",
            "subscription { subscribeDeviceState @skip(if: false) { mac } }",
            "subscription { subscribeDeviceState { mac mac } }",
            "subscription { subscribeDeviceState { a: mac a: online } }",
            "subscription A { subscribeDeviceState { mac } } subscription B { subscribeDeviceState { online } }",
            "query { health }",
        ])
    func declinedOperations(_ query: String) async throws {
        let mapper = try Self.mapper(Operation(query: query))
        #expect(mapper.plan == nil)
    }

    /// A random JSON value of any shape, nested up to `depth`.
    static func randomValue(_ random: inout SplitMix64, depth: Int = 2) -> JSONValue {
        switch random.below(depth > 0 ? 9 : 7) {
        case 0: return .null
        case 1: return .bool(random.chance(0.5))
        case 2: return .number([0, -1, 14, 2_147_483_648, 0x1p63, -0x1p63][random.below(6)])
        case 3: return .number([0.5, -12.25, 3.0, 1e21, 1.0e-7, 9_007_199_254_740_992.0, 1.5e16][random.below(6)])
        case 4: return .string(["", "Valid", "a\"b\\c", "line\nbreak\u{01}", "é✓𝄞", "12", "true"][random.below(7)])
        case 5: return .string("cam-\(random.below(100))")
        case 6: return .number(Double(random.below(2_000) - 1_000))
        case 7: return .array((0..<random.below(3)).map { _ in randomValue(&random, depth: depth - 1) })
        default:
            var members: [String: JSONValue] = [:]
            for key in ["uuid", "termsAgreement", "options", "x"] where random.chance(0.6) {
                members[key] = randomValue(&random, depth: depth - 1)
            }
            return .object(members)
        }
    }

    @Test("seeded: payloads of every shape are written as GraphQLSwift writes them, or left to it")
    func seededPayloads() async throws {
        let fields = [
            "mac", "derivant", "online", "recording", "fwUpdateState", "thingName", "status", "videoLength", "videoSize", "cloudSize",
            "hasH265", "createdAt", "licensePhase", "isFreePlan", "aiControlSetting", "reason", "userId", "revokedAt", "requestId",
        ]
        var mappers = try Self.notifierOperations.map { try Self.mapper($0.document, variables: $0.variables) }
        mappers += try Self.otherOperations.map { try Self.mapper($0) }
        var written = 0
        var declined = 0
        for index in 0..<600 {
            var random = SplitMix64.derived(seed: 0x5E1E_C7, index: UInt64(index))
            var event = Self.samples[random.below(Self.samples.count)]
            for field in fields where random.chance(0.3) {
                event.payload[field] = random.chance(0.2) ? nil : Self.randomValue(&random)
            }
            let mapper = mappers[random.below(mappers.count)]
            if try await Self.check(mapper, event, "seed index \(index): \(event.payload)") {
                written += 1
            } else {
                declined += 1
            }
        }
        #expect(written > 100 && declined > 100, "both paths are exercised: \(written) written, \(declined) declined")
    }
}
