import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The HTTP seam for `POST /event`, so tests can substitute a fake.
public protocol HTTPClient: Sendable {
    /// Sends a POST and returns the status code and body.
    func post(url: URL, headers: [String: String], body: Data) async throws -> (status: Int, body: Data)
}

/// ``HTTPClient`` on Foundation's `URLSession` (plain HTTP works on Linux too). The default session never follows a
/// redirect: a 3xx comes back as the status, so the credentials in the headers never go to a host the app did not name.
public struct URLSessionHTTPClient: HTTPClient {
    private let session: URLSession

    /// One ephemeral session for every default client: a session holds its delegate until invalidated, so one per
    /// client would never be freed.
    @usableFromInline static let refusingRedirects = URLSession(
        configuration: .ephemeral, delegate: RedirectRefusal.shared, delegateQueue: nil)

    /// Creates a client on `session` (default: a shared ephemeral session that refuses redirects). A session you pass
    /// refuses them on Apple platforms; on Linux only if its own delegate does (swift-corelibs-foundation asks no
    /// task delegate about redirects).
    public init(session: URLSession = refusingRedirects) { self.session = session }

    /// Sends the POST.
    public func post(url: URL, headers: [String: String], body: Data) async throws -> (status: Int, body: Data) {
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.httpBody = body
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await session.data(for: request, delegate: RedirectRefusal.shared)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
    }
}

/// Answers every redirect with `nil`, which ends the task with the 3xx response itself (Apple's documentation of
/// `URLSessionTaskDelegate.urlSession(_:task:willPerformHTTPRedirection:newRequest:completionHandler:)`;
/// swift-corelibs-foundation does the same).
private final class RedirectRefusal: NSObject, URLSessionTaskDelegate, Sendable {
    static let shared = RedirectRefusal()

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) { completionHandler(nil) }
}
