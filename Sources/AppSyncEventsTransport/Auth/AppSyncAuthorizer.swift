import AppSyncEventsWire
import Foundation
import SubscriberCore

/// Builds the AppSync Events authorization object for one connection's credentials.
///
/// The same object shape goes into the `header-` subprotocol at connect (signed over the body `{}` for IAM) and into
/// the `authorization` field of every `subscribe` and `publish` (signed over that message's body for IAM).
///
/// Every object carries ``host``: the HTTP host in the form an HTTP client writes it in its `Host` header. For IAM
/// exactly that string is signed, so the `host` the server reads and the one the signature covers are the same bytes,
/// whatever the letter case or port of the configured URL.
package struct AppSyncAuthorizer: Sendable {
    /// The endpoint whose HTTP host goes into every auth object.
    package let endpoint: AppSyncEndpoint
    /// The `host` of every auth object (and, for IAM, the signed `host`): the HTTP URL's host lowercased, an IPv6
    /// literal in brackets, with the port only when it is not the scheme's default (`https://API.example.com:443/event`
    /// gives `api.example.com`; `http://127.0.0.1:8787/event` gives `127.0.0.1:8787`). This is what an HTTP client
    /// sends as `Host` for HTTP publish and what botocore signs for the same URL.
    package let host: String
    private let credentials: AuthCredentials
    private let now: @Sendable () -> Date

    /// The headers IAM signs besides host and date (what the service and the official clients use).
    static let iamBaseHeaders = [
        "accept": "application/json, text/javascript",
        "content-encoding": "amz-1.0",
        "content-type": "application/json; charset=UTF-8",
    ]

    /// Creates an authorizer. `now` supplies the signing date for IAM.
    package init(endpoint: AppSyncEndpoint, credentials: AuthCredentials, now: @escaping @Sendable () -> Date = { Date() }) {
        self.endpoint = endpoint
        self.host = SigV4Signer.hostHeader(for: endpoint.httpURL)
        self.credentials = credentials
        self.now = now
    }

    /// The auth object for a request whose body is `body` (`{}` at connect).
    package func authorization(body: String) -> [String: String] {
        switch credentials {
        case .apiKey(let key):
            return ["host": host, "x-api-key": key]
        case .bearerToken(let token), .lambdaToken(let token):
            return ["host": host, "Authorization": token]
        case .iam(let aws):
            let signer = SigV4Signer(
                accessKeyID: aws.accessKeyID, secretAccessKey: aws.secretAccessKey, sessionToken: aws.sessionToken,
                region: aws.region, service: "appsync")
            // `host` is passed in, not derived by the signer, so the signed value is the sent value by construction.
            var headers = Self.iamBaseHeaders
            headers["host"] = host
            return signer.sign(method: "POST", url: endpoint.httpURL, headers: headers, body: Data(body.utf8), date: now())
        }
    }

    /// The auth object at connect time, as JSON text with sorted keys.
    package func connectAuthorizationJSON() -> String {
        JSONString.sortedStringObject(authorization(body: "{}"))
    }

    /// The `header-<base64url>` subprotocol carrying the connect auth object.
    package func headerSubprotocol() -> String {
        AppSyncSubprotocol.headerPrefix + Base64URL.encode(Data(connectAuthorizationJSON().utf8))
    }

    /// The subprotocols a connection offers: `aws-appsync-event-ws` and the auth header.
    package func subprotocols() -> [String] { [AppSyncSubprotocol.name, headerSubprotocol()] }
}
