/// How every link of a transport proves it is alive: one set of settings shared by both transports' configurations
/// (``LinkSettings/liveness``, held as `link.liveness` by `AppSyncEventsConfiguration` and `GraphQLTransportConfiguration`).
///
/// After ``quietPeriod`` without any inbound frame the link sends a WebSocket ping (an RFC 6455 control frame) and
/// counts as dead if no pong arrives within ``pongTimeout``; it is then dropped and replaced. Each link learns first
/// whether the server answers pings (one ping goes out right after the handshake). Where it does not, the link stops
/// pinging and falls back to the protocol's own check: the `ka` watchdog on AppSync Events (the interval it learns,
/// never later than `connectionTimeoutMs`), the protocol's `ping`/`pong` on graphql-transport-ws. A server that ignores
/// pings therefore never causes reconnects.
///
/// With the defaults a silent (blackholed) link is found at most `quietPeriod + pongTimeout` (40 s) after its last
/// frame. A probe (``probeTimeout``) checks every open link at once: after a network interface change and when the app
/// returns to the foreground (`RealtimeTransport.verifyConnection()`).
public struct LivenessSettings: Sendable, Equatable, CustomStringConvertible {
    /// Silence (no inbound frame of any kind) after which the link pings; `nil` never pings (neither WebSocket pings
    /// nor the protocol's fallback ping; AppSync keeps its `ka` watchdog). A busy link sends no pings. Default 30 s.
    public var quietPeriod: Duration?
    /// How long a ping may wait for its pong before the link counts as dead. Default 10 s.
    public var pongTimeout: Duration
    /// How long a probe's ping (network interface change, ``RealtimeTransport/verifyConnection()``) may wait for its
    /// pong. Default 3 s.
    public var probeTimeout: Duration
    /// Whether links use WebSocket pings at all; `false` uses the protocol's fallback from the start (for a server or
    /// proxy known to mishandle control frames). Default `true`.
    public var webSocketPings: Bool

    /// Creates settings; every argument has the default documented on its property.
    public init(
        quietPeriod: Duration? = .seconds(30), pongTimeout: Duration = .seconds(10), probeTimeout: Duration = .seconds(3),
        webSocketPings: Bool = true
    ) {
        self.quietPeriod = quietPeriod
        self.pongTimeout = pongTimeout
        self.probeTimeout = probeTimeout
        self.webSocketPings = webSocketPings
    }

    /// The defaults: ping after 30 s of silence, 10 s for the pong, 3 s for a probe, WebSocket pings on.
    public static let `default` = LivenessSettings()

    public var description: String {
        let quiet = quietPeriod.map { "\($0)" } ?? "never"
        return "liveness(quiet: \(quiet), pong: \(pongTimeout), probe: \(probeTimeout), webSocketPings: \(webSocketPings))"
    }
}
