import Foundation
import SubscriberCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A TCP proxy on 127.0.0.1 that injects the faults mobile networks produce, for chaos tests from outside the client:
/// a **hard close** (every connection is shut down at once, both ways) and a **silent blackhole** (connections stay
/// open but nothing is forwarded in either direction: the client's writes are swallowed, the server's never arrive —
/// the link looks alive until a keep-alive or a ping says otherwise).
///
/// Each accepted connection is piped to `upstreamPort` by two blocking threads; test code only, never for production.
public final class FaultInjectingProxy: Sendable {
    /// The port the proxy listens on.
    public let port: Int
    private let listener: Int32
    private let upstreamPort: Int
    private let state = Locked(State())

    private struct State {
        var pairs: [Int: Pair] = [:]
        var nextID = 0
        var accepted = 0
        var acceptedAt: [Date] = []
        var stopped = false
    }

    /// One proxied connection: the client's socket and the upstream socket.
    private final class Pair: Sendable {
        let client: Int32
        let upstream: Int32
        let blackholed = Locked(false)
        let pumpsLeft = Locked(2)

        init(client: Int32, upstream: Int32) {
            self.client = client
            self.upstream = upstream
        }

        func shutDown() {
            _ = shutdown(client, Int32(SHUT_RDWR))
            _ = shutdown(upstream, Int32(SHUT_RDWR))
        }
    }

    /// Errors starting the proxy.
    public struct StartError: Error, CustomStringConvertible {
        /// What failed.
        public var description: String
    }

    /// Starts a proxy to `127.0.0.1:upstreamPort` on an ephemeral port.
    public init(upstreamPort: Int) throws {
        let fd = socket(AF_INET, Self.streamType, 0)
        guard fd >= 0 else { throw StartError(description: "socket() failed: \(errno)") }
        var one: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 64) == 0 else {
            close(fd)
            throw StartError(description: "bind/listen failed: \(errno)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        self.upstreamPort = upstreamPort
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    /// How many connections the proxy accepted so far.
    public var acceptedCount: Int { state.withLock { $0.accepted } }

    /// When each connection was accepted, in order (to measure how fast a client replaces a dead link).
    public var acceptedTimes: [Date] { state.withLock { $0.acceptedAt } }

    /// Hard close: shuts every current connection down, both ways, at once.
    public func closeAll() {
        for pair in state.withLock({ Array($0.pairs.values) }) { pair.shutDown() }
    }

    /// Silent blackhole: every current connection stays open, but nothing is forwarded any more in either direction.
    /// New connections are not affected. End it with ``closeAll()``.
    public func blackholeAll() {
        for pair in state.withLock({ Array($0.pairs.values) }) { pair.blackholed.withLock { $0 = true } }
    }

    /// Stops accepting and closes every connection.
    public func stop() {
        let first = state.withLock { state -> Bool in
            defer { state.stopped = true }
            return !state.stopped
        }
        guard first else { return }
        _ = shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        closeAll()
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if state.withLock({ $0.stopped }) { return }
                if errno == EINTR { continue }
                return
            }
            let upstream = socket(AF_INET, Self.streamType, 0)
            var address = Self.loopback(port: upstreamPort)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard upstream >= 0, connected == 0 else {
                if upstream >= 0 { close(upstream) }
                close(client)
                continue
            }
            Self.writesNeverSignal(client)
            Self.writesNeverSignal(upstream)
            let pair = Pair(client: client, upstream: upstream)
            let id = state.withLock { state -> Int in
                state.accepted += 1
                state.acceptedAt.append(Date())
                defer { state.nextID += 1 }
                state.pairs[state.nextID] = pair
                return state.nextID
            }
            Thread { [self] in pump(from: client, to: upstream, pair, id) }.start()
            Thread { [self] in pump(from: upstream, to: client, pair, id) }.start()
        }
    }

    private func pump(from source: Int32, to destination: Int32, _ pair: Pair, _ id: Int) {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        loop: while true {
            let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            if pair.blackholed.withLock({ $0 }) { continue }  // swallowed: the link looks alive but carries nothing
            var offset = 0
            while offset < count {
                let written = buffer.withUnsafeBytes { send(destination, $0.baseAddress! + offset, count - offset, Self.noSignal) }
                if written <= 0 { break loop }
                offset += written
            }
        }
        pair.shutDown()
        let last = pair.pumpsLeft.withLock { left -> Bool in
            left -= 1
            return left == 0
        }
        if last {
            close(pair.client)
            close(pair.upstream)
            _ = state.withLock { $0.pairs.removeValue(forKey: id) }
        }
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    /// A write to a peer that reset the connection must fail with EPIPE, never raise SIGPIPE (which kills the test
    /// process): Linux passes `MSG_NOSIGNAL` with each `send`; Darwin has no such flag and sets `SO_NOSIGPIPE` on the
    /// socket instead.
    private static func writesNeverSignal(_ socket: Int32) {
        #if canImport(Darwin)
        var on: Int32 = 1
        _ = setsockopt(socket, SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size))
        #endif
    }

    #if canImport(Darwin)
    private static let streamType = SOCK_STREAM
    private static let noSignal: Int32 = 0  // SO_NOSIGPIPE on each socket instead (writesNeverSignal)
    #else
    private static let streamType = Int32(SOCK_STREAM.rawValue)
    private static let noSignal = Int32(MSG_NOSIGNAL)
    #endif
}
