import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The HTTP seam for `POST /event`, so tests can substitute a fake.
public protocol HTTPClient: Sendable {
    /// Sends a POST and returns the status code and body.
    func post(url: URL, headers: [String: String], body: Data) async throws -> (status: Int, body: Data)
}

/// ``HTTPClient`` on Foundation's `URLSession` (plain HTTP works on Linux too).
public struct URLSessionHTTPClient: HTTPClient {
    private let session: URLSession

    /// Creates a client on `session` (default: an ephemeral session).
    public init(session: URLSession = URLSession(configuration: .ephemeral)) { self.session = session }

    /// Sends the POST.
    public func post(url: URL, headers: [String: String], body: Data) async throws -> (status: Int, body: Data) {
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.httpBody = body
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await session.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
    }
}
