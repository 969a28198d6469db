import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// `POST /event`: HTTP publish with the auth object as request headers and `{"channel":…,"events":[…]}` as body.
///
/// 200 with `{"successful":[…],"failed":[…]}`; 400 (`BadRequestException`), 401 (`UnauthorizedException`) or 413
/// with `{"errors":[{"errorType":…,"message":…}]}` otherwise. IAM signatures are checked over the exact body bytes.
enum AppSyncHTTPPublishRoute {
    /// The path.
    static let path = "/event"
    /// The largest body read.
    static let maxBodyBytes = 2 * 1024 * 1024

    static func register(on router: Router<BasicRequestContext>, services: BackendServices) {
        router.post(RouterPath(stringLiteral: path)) { request, _ -> Response in
            await respond(to: request, services: services)
        }
    }

    static func respond(to request: Request, services: BackendServices) async -> Response {
        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: maxBodyBytes)
        } catch {
            return errorResponse(.contentTooLarge, .badRequest("Body larger than \(maxBodyBytes) bytes"))
        }
        let text = String(buffer: body)
        guard let parsed = try? JSONSerialization.jsonObject(with: Data(text.utf8)), let object = parsed as? [String: Any] else {
            return errorResponse(.badRequest, .badRequest("Body is not a JSON object"))
        }
        let publish: AppSyncPublishRequest
        switch AppSyncPublishRequest.parse(
            channel: object["channel"], events: object["events"], namespaces: services.appSyncSettings.namespaces)
        {
        case .failure(let error): return errorResponse(.badRequest, error)
        case .success(let request): publish = request
        }
        let auth = AuthObject(request: request.head)
        switch await services.authenticator.authenticate(auth, body: text) {
        case .failure(let failure):
            services.logger.info("HTTP publish refused", metadata: ["reason": "\(failure.message)"])
            return errorResponse(.unauthorized, failure.entry)
        case .success(let caller):
            guard ChannelAccess.allows(caller, channel: publish.channel) else {
                return errorResponse(.unauthorized, .unauthorized("You are not authorized to use channel \(publish.channel)"))
            }
        }
        let (result, deliverable) = publish.evaluate()
        if !deliverable.isEmpty { _ = await services.hub.publish(channel: publish.channel, events: deliverable) }
        return jsonResponse(.ok, AppSyncServerMessage.httpPublishResponse(result))
    }

    static func errorResponse(_ status: HTTPResponse.Status, _ error: AppSyncErrorEntry) -> Response {
        jsonResponse(status, error.httpBody)
    }

    static func jsonResponse(_ status: HTTPResponse.Status, _ json: String) -> Response {
        Response(status: status, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(string: json)))
    }
}
