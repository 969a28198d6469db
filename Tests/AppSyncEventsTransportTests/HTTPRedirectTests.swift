import Foundation
import SubscriberCore
import Testing

@testable import AppSyncEventsTransport

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A blocking HTTP/1.1 server on 127.0.0.1 that answers every request with one canned response and records what it
/// received (test code only; one thread, one connection at a time).
private final class LoopbackHTTPServer: Sendable {
    let port: Int
    private let listener: Int32
    private let received = Locked<[String]>([])

    /// The requests received so far, head and body as text.
    var requests: [String] { received.withLock { $0 } }

    struct StartError: Error { var errno: Int32 }

    init(status: Int, headers: [String] = [], body: String = "") throws {
        let fd = socket(AF_INET, Self.streamType, 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard fd >= 0, bound, listen(fd, 8) == 0 else { throw StartError(errno: errno) }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        let head = ["HTTP/1.1 \(status) Canned", "Content-Length: \(body.utf8.count)", "Connection: close"] + headers
        let response = Array((head.joined(separator: "\r\n") + "\r\n\r\n" + body).utf8)
        Thread { [self] in serve(response) }.start()
    }

    /// Stops accepting (wakes the blocked `accept`).
    func stop() {
        _ = shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private func serve(_ response: [UInt8]) {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            // The whole request (head and `content-length` body) is read first: closing on unread bytes resets the
            // connection before the client reads the answer.
            var request: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !Self.isComplete(request) {
                let count = read(client, &buffer, buffer.count)
                if count <= 0 { break }
                request += buffer[0..<count]
            }
            received.withLock { $0.append(String(decoding: request, as: UTF8.self)) }
            _ = response.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Self.noSignal) }
            close(client)
        }
    }

    private static func isComplete(_ request: [UInt8]) -> Bool {
        let text = String(decoding: request, as: UTF8.self)
        guard let end = text.range(of: "\r\n\r\n") else { return false }
        let length =
            text[..<end.lowerBound].split(separator: "\r\n")
            .first { $0.lowercased().hasPrefix("content-length:") }
            .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
        return text[end.upperBound...].utf8.count >= length
    }

    #if canImport(Darwin)
    private static let streamType = SOCK_STREAM
    private static let noSignal: Int32 = 0  // a peer gone early is not expected here
    #else
    private static let streamType = Int32(SOCK_STREAM.rawValue)
    private static let noSignal = Int32(MSG_NOSIGNAL)
    #endif
}

/// The default ``URLSessionHTTPClient`` on real loopback sockets: a redirect must not carry the credentials elsewhere.
@Suite("URLSessionHTTPClient: redirects", .timeLimit(.minutes(2)))
struct HTTPRedirectTests {
    @Test(
        "a 307 or 308 to another port is not followed: that port receives nothing, the publish throws publishRejected",
        arguments: [307, 308])
    func redirectIsNotFollowed(status: Int) async throws {
        let elsewhere = try LoopbackHTTPServer(status: 200, body: #"{"successful":[{"identifier":"x","index":0}],"failed":[]}"#)
        defer { elsewhere.stop() }
        let named = try LoopbackHTTPServer(status: status, headers: ["Location: http://127.0.0.1:\(elsewhere.port)/event"])
        defer { named.stop() }
        let endpoint = try AppSyncEndpoint("http://127.0.0.1:\(named.port)/event")
        let authorizer = AppSyncAuthorizer(endpoint: endpoint, credentials: .apiKey("da2-secret"))
        await #expect(throws: RealtimeError.publishRejected(errorType: "HTTP \(status)", message: "")) {
            try await AppSyncHTTPPublisher(endpoint: endpoint).publish(channel: "default/test", events: ["1"], authorizer: authorizer)
        }
        #expect(named.requests.count == 1)
        #expect(named.requests.first?.contains("da2-secret") == true)
        #expect(elsewhere.requests.isEmpty, "the redirect was followed with the credentials: \(elsewhere.requests)")
    }
}
