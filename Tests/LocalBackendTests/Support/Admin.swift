import AppSyncEventsTransport
import Foundation
import LocalBackend
import Testing

extension Backend {
    /// `POST /vortex/<path>` with a JSON body; returns the status and the decoded JSON object.
    @discardableResult
    func admin(_ path: String, _ json: String) async throws -> (status: Int, json: [String: Any]) {
        let base = try #require(endpoints.admin, "admin endpoints are off")
        let url = try #require(URL(string: base + "/" + path))
        let response = try await URLSessionHTTPClient().post(url: url, headers: ["content-type": "application/json"], body: Data(json.utf8))
        let object = (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any] ?? [:]
        return (response.status, object)
    }
}
