import Foundation
import NIOCore
import NIOPosix

/// Why NIO could not connect, in words support staff can read: apps show it in `networkError`, and NIO's own
/// description nests every attempt (`Connection errors: SingleConnectionFailure(target: [IPv4]127.0.0.1/127.0.0.1:1,
/// error: connection reset (error set): Connection refused) (errno: 111))`).
enum ConnectFailureText {
    /// `127.0.0.1:1: connection refused (errno 111)`, one entry per address tried; `cannot resolve example.invalid: …`.
    static func describe(_ error: any Error) -> String {
        switch error {
        case let error as NIOConnectionError:
            if let lookup = error.dnsAError ?? error.dnsAAAAError { return "cannot resolve \(error.host): \(describe(lookup))" }
            if error.connectionErrors.isEmpty { return "\(error.host):\(error.port): no address to connect to" }
            return error.connectionErrors.map { "\(address($0.target)): \(describe($0.error))" }.joined(separator: "; ")
        case let error as SocketAddressError.UnknownHost: return "\(error.errorDescription) (error \(error.errorCode))"
        case let error as IOError: return "\(reason(errno: error.errnoCode)) (errno \(error.errnoCode))"
        case ChannelError.connectTimeout(let limit): return "no answer within \(Duration.nanoseconds(limit.nanoseconds))"
        default: return "\(error)"
        }
    }

    /// `127.0.0.1:1` or `[::1]:1`, without NIO's `[IPv4]host/` prefix.
    private static func address(_ target: SocketAddress) -> String {
        guard let ip = target.ipAddress, let port = target.port else { return "\(target)" }
        return target.protocol == .inet6 ? "[\(ip)]:\(port)" : "\(ip):\(port)"
    }

    /// The reasons a connect fails, spelled here: `strerror` is not thread-safe.
    private static func reason(errno code: CInt) -> String {
        switch code {
        case ECONNREFUSED: "connection refused"
        case ECONNRESET: "connection reset"
        case ETIMEDOUT: "timed out"
        case EHOSTUNREACH: "host unreachable"
        case ENETUNREACH: "network unreachable"
        case ENETDOWN: "network down"
        case EADDRNOTAVAIL: "address not available"
        case EACCES, EPERM: "not permitted"
        default: "connect failed"
        }
    }
}
