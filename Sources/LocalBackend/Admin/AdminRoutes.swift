import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOFoundationEssentialsCompat
import SubscriberCore

/// The admin endpoints under `/vortex`, registered only with ``LocalBackendConfiguration/admin`` (no auth: the
/// server is for local development and listens on loopback by default):
///
/// - `POST /vortex/events` — one ``DomainEvent``; answers ``FanOutSummary`` (`{"deliveredTo":[…],…}`). An optional
///   `"protocols":["appsync"]` (or `["graphql"]`) publishes it on that protocol alone (``EventPublishTargets``);
/// - `POST /vortex/faults` — one fault command (see ``FaultCommand``); answers `{"closed":N,"state":{…}}`;
/// - `GET /vortex/faults` — the current fault state;
/// - `GET /vortex/status` — open connections per protocol and AppSync subscriptions.
enum AdminRoutes {
    static func register(on router: Router<BasicRequestContext>, services: BackendServices) {
        router.post("/vortex/events") { request, _ -> Response in
            await postEvent(request, services: services)
        }
        router.post("/vortex/faults") { request, _ -> Response in
            await postFault(request, services: services)
        }
        router.get("/vortex/faults") { _, _ -> Response in
            stateResponse(services.faults, closed: nil)
        }
        router.get("/vortex/status") { _, _ -> Response in
            let subscriptions = await services.hub.subscriptionCount
            let json = JSONString.object([
                (key: "appsyncConnections", json: String(services.connections.count(of: .appSyncEvents))),
                (key: "graphqlConnections", json: String(services.connections.count(of: .graphQL))),
                (key: "appsyncSubscriptions", json: String(subscriptions)),
            ])
            return AppSyncHTTPPublishRoute.jsonResponse(.ok, json)
        }
    }

    private static func postEvent(_ request: Request, services: BackendServices) async -> Response {
        let event: DomainEvent
        let targets: EventPublishTargets
        do {
            let body = Data(buffer: try await request.body.collect(upTo: 1024 * 1024))
            event = try JSONDecoder().decode(DomainEvent.self, from: body)
            try event.validate()
            targets = try JSONDecoder().decode(EventPublishTargets.self, from: body)
        } catch {
            return AppSyncHTTPPublishRoute.errorResponse(.badRequest, .badRequest("Not a domain event: \(error)"))
        }
        let summary = await services.bus.publish(event, on: targets.protocols)
        return encoded(summary)
    }

    private static func postFault(_ request: Request, services: BackendServices) async -> Response {
        let command: FaultCommand
        do {
            let body = try await request.body.collect(upTo: 64 * 1024)
            command = try JSONDecoder().decode(FaultCommand.self, from: Data(buffer: body))
        } catch {
            return AppSyncHTTPPublishRoute.errorResponse(.badRequest, .badRequest("Not a fault command: \(error)"))
        }
        do {
            let closed = try command.apply(to: services.faults)
            services.logger.info("fault applied", metadata: ["action": "\(command.action)"])
            return stateResponse(services.faults, closed: command.action == "closeAll" ? closed : nil)
        } catch {
            return AppSyncHTTPPublishRoute.errorResponse(.badRequest, error)
        }
    }

    private static func stateResponse(_ faults: FaultInjector, closed: Int?) -> Response {
        struct Body: Encodable {
            var closed: Int?
            var state: FaultInjector.State
        }
        return encoded(Body(closed: closed, state: faults.snapshot))
    }

    private static func encoded(_ value: some Encodable) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        guard let data = try? encoder.encode(value) else {
            return AppSyncHTTPPublishRoute.errorResponse(.internalServerError, AppSyncErrorEntry(errorType: "InternalError", message: nil))
        }
        return AppSyncHTTPPublishRoute.jsonResponse(.ok, String(decoding: data, as: UTF8.self))
    }
}
