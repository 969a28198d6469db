import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A minimal JSON POST for the remote drill backend's admin endpoint.
enum HTTPPost {
    static func send(url: URL, json: Data) async throws {
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.httpBody = json
        request.setValue("application/json", forHTTPHeaderField: "content-type")
        let (body, response) = try await URLSession.shared.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard (200..<300).contains(status) else {
            throw DrillError.backend("POST \(url.path) answered \(status): \(String(decoding: body.prefix(200), as: UTF8.self))")
        }
    }
}
