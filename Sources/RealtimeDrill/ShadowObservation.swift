import BackendNotifier
import Composition
import Foundation
import SubscriberCore

/// Two notifiers of one identity, one on AppSync Events and one on GraphQL, each observing every stream, side by side:
/// the parity check's two sides and the rollback's reference.
final class ShadowObservation: Sendable {
    let appsync: RealtimeStack
    let graphql: RealtimeStack
    let appSyncRecorder: StreamRecorder
    let graphQLRecorder: StreamRecorder
    let identity: DrillIdentity

    private init(target: DrillTarget, appsync: RealtimeStack, graphql: RealtimeStack) async {
        self.appsync = appsync
        self.graphql = graphql
        self.identity = target.identity
        appSyncRecorder = await StreamRecorder(notifier: appsync.notifier)
        graphQLRecorder = await StreamRecorder(notifier: graphql.notifier)
    }

    /// Builds both notifiers and starts observing.
    static func start(_ target: DrillTarget) async throws -> ShadowObservation {
        let appsync = try target.stack(.appsync)
        let graphql = try target.stack(.graphql)
        return await ShadowObservation(target: target, appsync: appsync, graphql: graphql)
    }

    /// Waits until all five upstreams are live on both sides.
    func waitUntilLive(timeout: Double) async throws {
        for (recorder, name) in [(appSyncRecorder, "appsync"), (graphQLRecorder, "graphql")]
        where !(await recorder.waitForLive(upstreams: NotifierUpstream.allCases.count, timeout: timeout)) {
            throw DrillError.notLive("not every upstream subscription became live on \(name) within \(Int(timeout)) s")
        }
    }

    /// The events each side delivered so far.
    var appSyncEvents: [ObservedEvent] { appSyncRecorder.observed(identity: identity) }
    /// The events GraphQL delivered so far.
    var graphQLEvents: [ObservedEvent] { graphQLRecorder.observed(identity: identity) }

    /// When the last value arrived on either side.
    var lastArrival: Date { max(appSyncRecorder.lastReceived, graphQLRecorder.lastReceived) }

    /// The report on everything observed, judging the events that arrived from `start` to `end`.
    func judge(_ matcher: ParityMatcher, start: Date, end: Date) -> ShadowParityReport {
        matcher.judge(
            appsync: appSyncEvents, graphql: graphQLEvents, appSyncGaps: appSyncRecorder.gaps, graphQLGaps: graphQLRecorder.gaps,
            start: start, end: end)
    }

    /// Whether every event that arrived from `start` to `end` has its counterpart (the run may stop settling).
    func settled(_ matcher: ParityMatcher, start: Date, end: Date) -> Bool {
        let report = judge(matcher, start: start, end: end)
        return report.onlyAppSync + report.onlyGraphQL + report.different + report.insideGaps == 0
    }

    /// Stops observing and disconnects both notifiers.
    func stop() async {
        appSyncRecorder.cancel()
        graphQLRecorder.cancel()
        await appsync.shutdown()
        await graphql.shutdown()
    }
}
