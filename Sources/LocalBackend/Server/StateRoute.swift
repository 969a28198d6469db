import Foundation
import HTTPTypes
import Hummingbird
import SubscriberCore

/// `GET /vortex/state?orgId=O&userId=U`: the current state per entity that identity may see
/// (``EventBus/state(organizationId:userId:)``), the other half of a client's backfill. Allowed for a request carrying
/// that identity's credentials (a JWT or Lambda token for `U`, as `Authorization`), or for any request when the admin
/// endpoints are on (`serve --admin`: loopback development). An API key or IAM signature names no user: refused.
enum StateRoute {
    static let path = "/vortex/state"

    static func register(on router: Router<BasicRequestContext>, services: BackendServices, admin: Bool) {
        router.get(RouterPath(path)) { request, _ -> Response in
            await answer(request, services: services, admin: admin)
        }
    }

    static func answer(_ request: Request, services: BackendServices, admin: Bool) async -> Response {
        guard let organizationId = request.uri.queryParameters["orgId"].map(String.init), !organizationId.isEmpty,
            let userId = request.uri.queryParameters["userId"].map(String.init), !userId.isEmpty
        else {
            return AppSyncHTTPPublishRoute.errorResponse(.badRequest, .badRequest("orgId and userId are required query parameters"))
        }
        if !admin {
            switch await services.authenticator.authenticate(AuthObject(request: request.head), body: "", host: .optional) {
            case .failure(let failure):
                return AppSyncHTTPPublishRoute.errorResponse(.unauthorized, failure.entry)
            case .success(let caller) where caller.userID != userId:
                return AppSyncHTTPPublishRoute.errorResponse(.forbidden, .unauthorized("These credentials are not \(userId)'s"))
            case .success:
                break
            }
        }
        return AppSyncHTTPPublishRoute.jsonResponse(.ok, services.bus.state(organizationId: organizationId, userId: userId))
    }
}
