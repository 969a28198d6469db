import Foundation
import NIOCore
import NIOPosix

/// One raw HTTP/1.1 exchange over a fresh TCP connection, for what a WebSocket client hides: the status and headers of an
/// upgrade response (101 with the selected subprotocol, or a refusal).
enum RawHTTP {
    struct Response {
        var status: Int
        var headers: [(name: String, value: String)]
        var body: String

        func header(_ name: String) -> String? { headers.first { $0.name.lowercased() == name.lowercased() }?.value }
    }

    enum Failure: Error { case malformed(String) }

    /// Sends a WebSocket upgrade request for `path` and returns the response head (and body, for refusals).
    static func upgrade(host: String, port: Int, path: String, subprotocols: [String] = []) async throws -> Response {
        var request = "GET \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        request += "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
        if !subprotocols.isEmpty { request += "Sec-WebSocket-Protocol: \(subprotocols.joined(separator: ", "))\r\n" }
        request += "\r\n"
        return try await exchange(host: host, port: port, request: request)
    }

    /// Sends `request` verbatim and reads one response.
    static func exchange(host: String, port: Int, request: String) async throws -> Response {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        return try await channel.executeThenClose { inbound, outbound in
            try await outbound.write(ByteBuffer(string: request))
            var received = ""
            for try await chunk in inbound {
                received += String(buffer: chunk)
                if let response = try parse(received) { return response }
            }
            if let response = try parse(received, atEnd: true) { return response }
            throw Failure.malformed(received)
        }
    }

    /// A complete response in `text`, or `nil` when more is needed.
    private static func parse(_ text: String, atEnd: Bool = false) throws -> Response? {
        guard let headEnd = text.range(of: "\r\n\r\n") else { return nil }
        let lines = text[..<headEnd.lowerBound].components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { throw Failure.malformed(lines[0]) }
        let headers: [(name: String, value: String)] = lines.dropFirst().compactMap { line in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        let body = String(text[headEnd.upperBound...])
        var response = Response(status: status, headers: headers, body: body)
        if status == 101 { response.body = ""; return response }
        if let length = response.header("content-length").flatMap(Int.init) {
            guard body.utf8.count >= length else { return nil }
            return response
        }
        return atEnd ? response : nil
    }
}
