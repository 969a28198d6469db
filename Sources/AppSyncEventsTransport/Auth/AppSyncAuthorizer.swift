import Foundation
import SubscriberCore

/// Builds the AppSync Events authorization object for one connection's credentials.
///
/// The same object shape goes into the `header-` subprotocol at connect (signed over the body `{}` for IAM) and into
/// the `authorization` field of every `subscribe` and `publish` (signed over that message's body for IAM).
public struct AppSyncAuthorizer: Sendable {
    /// The endpoint whose HTTP host goes into every auth object.
    public let endpoint: AppSyncEndpoint
    private let credentials: AuthCredentials
    private let now: @Sendable () -> Date

    /// The headers IAM signs besides host and date (what the service and the official clients use).
    static let iamBaseHeaders = [
        "accept": "application/json, text/javascript",
        "content-encoding": "amz-1.0",
        "content-type": "application/json; charset=UTF-8",
    ]

    /// Creates an authorizer. `now` supplies the signing date for IAM.
    public init(endpoint: AppSyncEndpoint, credentials: AuthCredentials, now: @escaping @Sendable () -> Date = { Date() }) {
        self.endpoint = endpoint
        self.credentials = credentials
        self.now = now
    }

    /// The auth object for a request whose body is `body` (`{}` at connect).
    public func authorization(body: String) -> [String: String] {
        switch credentials {
        case .apiKey(let key):
            return ["host": endpoint.host, "x-api-key": key]
        case .bearerToken(let token), .lambdaToken(let token):
            return ["host": endpoint.host, "Authorization": token]
        case .iam(let aws):
            let signer = SigV4Signer(
                accessKeyID: aws.accessKeyID, secretAccessKey: aws.secretAccessKey, sessionToken: aws.sessionToken,
                region: aws.region, service: "appsync")
            var signed = signer.sign(method: "POST", url: endpoint.httpURL, headers: Self.iamBaseHeaders, body: Data(body.utf8), date: now())
            signed["host"] = endpoint.host
            return signed
        }
    }

    /// The auth object at connect time, as JSON text with sorted keys.
    public func connectAuthorizationJSON() -> String {
        JSONString.sortedStringObject(authorization(body: "{}"))
    }

    /// The `header-<base64url>` subprotocol carrying the connect auth object.
    public func headerSubprotocol() -> String {
        "header-" + Self.base64URL(Data(connectAuthorizationJSON().utf8))
    }

    /// The subprotocols a connection offers: `aws-appsync-event-ws` and the auth header.
    public func subprotocols() -> [String] { ["aws-appsync-event-ws", headerSubprotocol()] }

    /// Base64url without padding (`+` to `-`, `/` to `_`, `=` stripped), as the service expects in the subprotocol.
    public static func base64URL(_ data: Data) -> String {
        var text = data.base64EncodedString()
        text = text.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        while text.hasSuffix("=") { text.removeLast() }
        return text
    }

    /// Decodes base64url with or without padding; `nil` when malformed.
    public static func decodeBase64URL(_ text: String) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        let remainder = base64.count % 4
        if remainder == 1 { return nil }
        if remainder > 0 { base64 += String(repeating: "=", count: 4 - remainder) }
        return Data(base64Encoded: base64)
    }
}
