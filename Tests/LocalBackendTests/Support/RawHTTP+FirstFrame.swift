import Foundation
import NIOCore
import NIOPosix

extension RawHTTP {
    /// One server frame as it arrived on the wire.
    struct Frame: Equatable {
        var opcode: UInt8
        var payload: [UInt8]

        /// For a close frame: the status code (the payload's first two bytes, big-endian).
        var closeCode: UInt16? {
            guard opcode == 0x8, payload.count >= 2 else { return nil }
            return UInt16(payload[0]) << 8 | UInt16(payload[1])
        }

        /// For a close frame: the reason (the payload after the code).
        var closeReason: String? {
            guard opcode == 0x8, payload.count >= 2 else { return nil }
            return String(decoding: payload.dropFirst(2), as: UTF8.self)
        }
    }

    enum FrameFailure: Error { case noFrame(String), timedOut }

    /// Sends a WebSocket upgrade for `path`, sends nothing after it, and returns the response head and the first frame
    /// the server writes on its own — what swift-websocket's `WSClient` can miss when it follows the 101 at once.
    /// Fails after `timeout` instead of hanging when no frame comes.
    static func upgradeAndReadFirstFrame(
        host: String, port: Int, path: String, subprotocols: [String], timeout: Duration = .seconds(10)
    ) async throws -> (Response, Frame) {
        var request = "GET \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        request += "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
        if !subprotocols.isEmpty { request += "Sec-WebSocket-Protocol: \(subprotocols.joined(separator: ", "))\r\n" }
        request += "\r\n"
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        return try await channel.executeThenClose { inbound, outbound in
            try await outbound.write(ByteBuffer(string: request))
            return try await withThrowingTaskGroup(of: (Response, Frame)?.self) { group in
                group.addTask {
                    var received: [UInt8] = []
                    for try await chunk in inbound {
                        received += chunk.readableBytesView
                        if let parsed = try parseHeadAndFrame(received) { return parsed }
                    }
                    throw FrameFailure.noFrame(String(decoding: received, as: UTF8.self))
                }
                group.addTask {
                    try await Task.sleep(for: timeout)
                    return nil
                }
                defer { group.cancelAll() }
                guard let first = try await group.next(), let result = first else { throw FrameFailure.timedOut }
                return result
            }
        }
    }

    /// The response head and the first complete frame in `bytes`, or `nil` when more bytes are needed.
    private static func parseHeadAndFrame(_ bytes: [UInt8]) throws -> (Response, Frame)? {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        guard bytes.count >= separator.count,
            let end = (0...(bytes.count - separator.count)).first(where: { bytes[$0..<$0 + separator.count].elementsEqual(separator) })
        else { return nil }
        let headText = String(decoding: bytes[..<end], as: UTF8.self) + "\r\n\r\n"
        let lines = headText.components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { throw Failure.malformed(lines[0]) }
        let headers: [(name: String, value: String)] = lines.dropFirst().compactMap { line in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        let frame = Array(bytes[(end + 4)...])
        guard frame.count >= 2 else { return nil }
        var length = Int(frame[1] & 0x7F)
        var offset = 2
        if length == 126 {
            guard frame.count >= 4 else { return nil }
            length = Int(frame[2]) << 8 | Int(frame[3])
            offset = 4
        } else if length == 127 {
            guard frame.count >= 10 else { return nil }
            length = frame[2..<10].reduce(0) { $0 << 8 | Int($1) }
            offset = 10
        }
        guard frame.count >= offset + length else { return nil }
        return (
            Response(status: status, headers: headers, body: ""),
            Frame(opcode: frame[0] & 0x0F, payload: Array(frame[offset..<offset + length]))
        )
    }
}
