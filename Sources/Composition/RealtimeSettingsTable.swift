import AppSyncEventsTransport
import BackendNotifier
import Foundation
import GraphQLTransport
import SubscriberCore

/// Every setting of ``RealtimeConfiguration``, each declared once (``RealtimeSetting``): key, environment variable,
/// kind, default, bounds and doc line. ``RealtimeConfiguration/applyingJSON(_:source:)``,
/// ``RealtimeConfiguration/applyingEnvironment(_:)``, ``RealtimeConfiguration/validate()`` and the reference table in
/// `docs/configuration.md` (``markdownReference()``) all come from it; a test fails when the documentation differs.
package enum RealtimeSettingsTable {
    /// The settings, in the order of the reference.
    package static let settings: [RealtimeSetting] = [
        .choice(
            "transport", \.transport, environment: "VORTEX_REALTIME_TRANSPORT",
            doc: "The transport the notifier starts on. **This is the rollback flag.**"),
        .text(
            "appSyncEndpoint", \.appSyncEndpoint, environment: "VORTEX_REALTIME_APPSYNC_ENDPOINT", kind: .url,
            doc:
                "AppSync Events HTTP URL ending in `/event` (the real-time URL is derived). Required for `appsync`, and for failover. `http://` only on loopback.",
            parseURL: { _ = try AppSyncEndpoint($0) }),
        .text(
            "graphQLEndpoint", \.graphQLEndpoint, environment: "VORTEX_REALTIME_GRAPHQL_ENDPOINT", kind: .url,
            doc: "GraphQL WebSocket URL, `wss://…/graphql`. Required for `graphql`, and for failover. `ws://` only on loopback.",
            parseURL: { _ = try GraphQLTransportConfiguration($0) }),
        .choice(
            "authMode", \.authMode, environment: "VORTEX_REALTIME_AUTH_MODE",
            doc:
                "`session`: the app's `AuthSession` gives credentials (Cognito JWT, Lambda token or IAM) before every connection attempt. `apiKey`: AppSync uses `apiKey` (sign-in state still comes from the session). GraphQL always sends the session's credentials in `connection_init`, shaped by `graphQLConnectionPayload`."
        ),
        .text(
            "apiKey", \.apiKey, environment: "VORTEX_REALTIME_API_KEY", hidesValue: true,
            doc: "The AppSync API key for `authMode` `apiKey`; an error with `session`."),
        .reconnectPolicy(
            "reconnect", \.reconnect, environment: "VORTEX_REALTIME_RECONNECT",
            doc:
                "`fixed:SECONDS` or `exponential:BASE:MAX` (full jitter: each delay random between 0 and `min(MAX, BASE × 2^(attempt-1))`; `:jitter=J` keeps at least `1 - J` of it), optionally followed by `:attempts=N`. Seconds at most 86400. The default makes the first attempt within a second, then waits up to 2, 4, 8 and 10 s (figures in `docs/architecture.md`, \"Reconnect policy\"). A malformed value is an error that says what is wrong. No attempt is made while the network path is unsatisfied."
        ),
        .seconds(
            "ackTimeoutSeconds", \.ackTimeoutSeconds, environment: "VORTEX_REALTIME_ACK_TIMEOUT",
            doc: "Wait for `connection_ack` (also bounds the WebSocket upgrade and each attempt's credentials fetch)."),
        .optionalSeconds(
            "maxConnectionDurationSeconds", \.maxConnectionDurationSeconds, environment: "VORTEX_REALTIME_MAX_CONNECTION_DURATION",
            bounds: RealtimeSetting.Bounds(lower: 60, includesLower: true, upper: 86_400), never: "never rotate",
            doc: "AppSync: rotate the connection before this age, without a gap."),
        .optionalSeconds(
            "liveness.quietPeriodSeconds", \.liveness.quietPeriodSeconds, environment: "VORTEX_REALTIME_QUIET_PERIOD", never: "never ping",
            doc:
                "Both transports: after this long without any inbound frame a link sends a WebSocket ping. A busy link sends none. Where the server ignores WebSocket pings, the fallback is AppSync's `ka` watchdog (learned interval, never later than `connectionTimeoutMs`) or GraphQL's own `ping` after the same quiet period."
        ),
        .seconds(
            "liveness.pongTimeoutSeconds", \.liveness.pongTimeoutSeconds, environment: "VORTEX_REALTIME_PONG_TIMEOUT",
            doc:
                "Both transports: a ping's pong may take this long; a link that answers pings and misses one is dropped and replaced. With the defaults a silent link is found at most 40 s after its last frame (44 s on AppSync, where a ping may wait for a `ka` due with it)."
        ),
        .seconds(
            "liveness.probeTimeoutSeconds", \.liveness.probeTimeoutSeconds, environment: "VORTEX_REALTIME_PROBE_TIMEOUT",
            doc:
                "The pong timeout of a probe: every open link is probed at once after a change of network (Wi-Fi ↔ cellular, or another Wi-Fi network) and on `verifyConnection()` (the notifier's `enterForeground()`)."
        ),
        .onOff(
            "liveness.webSocketPings", \.liveness.webSocketPings, environment: "VORTEX_REALTIME_WEBSOCKET_PINGS",
            doc:
                "`false`: no WebSocket pings; the protocol's own check from the start (for a server or proxy that mishandles control frames)."
        ),
        .integer(
            "bufferLimit", \.bufferLimit, environment: "VORTEX_REALTIME_BUFFER_LIMIT", minimum: 1,
            doc:
                "Events buffered per subscription along the whole path: each transport subscription's buffer (`LinkSettings.subscriptionBufferLimit`) and each observer of a notifier stream. Set it at or above the largest burst that must arrive complete. A consumer takes its whole queue at once, so up to twice this is held in memory per stream."
        ),
        .choice(
            "bufferOverflow", \.bufferOverflow, environment: "VORTEX_REALTIME_BUFFER_OVERFLOW",
            doc:
                "What goes when an observer's buffer is full. Every drop is counted and reported as `eventsLost(stream:transport:loss:)` with reason `bufferOverflow`."
        ),
        .seconds(
            "backgroundGraceSeconds", \.backgroundGraceSeconds, environment: "VORTEX_REALTIME_BACKGROUND_GRACE",
            bounds: RealtimeSetting.Bounds(lower: 0, includesLower: true, upper: 86_400),
            doc: "After `enterBackground()`, close the connection after this delay (a quick app switch keeps it)."),
        .seconds(
            "switchTimeoutSeconds", \.switchTimeoutSeconds, environment: "VORTEX_REALTIME_SWITCH_TIMEOUT",
            doc: "A transport switch must get every stream live within this; otherwise it is abandoned and the old transport stays."),
        .seconds(
            "switchSettleSeconds", \.switchSettleSeconds, environment: "VORTEX_REALTIME_SWITCH_SETTLE",
            bounds: RealtimeSetting.Bounds(lower: 0, includesLower: true, upper: 60),
            doc:
                "Once every stream of a planned switch is live on the new transport, the old one goes on delivering this long (events on their way over the old link still arrive; those both deliver are delivered once)."
        ),
        .seconds(
            "networkErrorAfterSeconds", \.networkErrorAfterSeconds, environment: "VORTEX_REALTIME_NETWORK_ERROR_AFTER",
            doc:
                "Report `networkError` when the notifier has had no live connection (while signed in and in the foreground) for this long. A reconnect policy that gives up reports it at once."
        ),
        .operations(
            "graphQLOperations", \.graphQLOperations, defaultNote: "none: the default documents",
            doc:
                "The app's own GraphQL operation per upstream (`device`, `organization`, `archive`, `role`, `revoke`): `{\"query\": \"…\", \"operationName\": \"…\"}`. The notifier adds the variables `userId`, `orgId` and `organizationId` the query declares (strings; the organization's only when one is signed in). Check them with `vortex-realtime preflight --config FILE`: it names each missing operation, argument or field, and each variable whose declared type does not fit the argument it fills, cannot hold a string, is required but not supplied, or is declared but unused."
        ),
        .jsonTemplate(
            "graphQLConnectionPayload", \.graphQLConnectionPayload, environment: "VORTEX_REALTIME_GRAPHQL_CONNECTION_PAYLOAD",
            defaultNote: "none: `{\"Authorization\":\"<token>\"}` (`{\"x-api-key\":\"<key>\"}` for an API key)",
            doc:
                "The GraphQL `connection_init` payload for a legacy server that expects another shape: a JSON object template whose string values may hold `${token}` (the session's JWT or Lambda token) and `${apiKey}` (its API key). In a file, the object itself or the same as JSON text. Checked at load: see below. Check it against the server with `vortex-realtime preflight`."
        ),
        .onOff(
            "failover.enabled", \.failover.enabled, environment: "VORTEX_REALTIME_FAILOVER",
            doc: "Automatic failover to the other transport. Needs both endpoints."),
        .seconds(
            "failover.unhealthyAfterSeconds", \.failover.unhealthyAfterSeconds, environment: "VORTEX_REALTIME_FAILOVER_UNHEALTHY_AFTER",
            doc: "Fail over when the active transport has not been connected for this long."),
        .integer(
            "failover.maxFailures", \.failover.maxFailures, environment: "VORTEX_REALTIME_FAILOVER_MAX_FAILURES", minimum: 1,
            doc:
                "...or when it lost an established connection (and reconnected) this many times within `failureWindowSeconds`. Failed attempts within one outage count toward `unhealthyAfterSeconds` instead; losses while the device has no network do not count."
        ),
        .seconds(
            "failover.failureWindowSeconds", \.failover.failureWindowSeconds, environment: "VORTEX_REALTIME_FAILOVER_WINDOW",
            doc: "The window for `maxFailures`."),
        .seconds(
            "failover.failbackAfterSeconds", \.failover.failbackAfterSeconds, environment: "VORTEX_REALTIME_FAILBACK_AFTER",
            doc:
                "Fail back to the configured `transport` once a probe connection to it has stayed connected this long (no flapping)."
        ),
    ]

    /// Keys and variables of earlier versions: refused with an error naming their replacement.
    package static let replaced: [ReplacedRealtimeSetting] = [
        ReplacedRealtimeSetting(
            key: "graphQLPingIntervalSeconds", environmentVariable: "VORTEX_REALTIME_GRAPHQL_PING_INTERVAL",
            replacement: "liveness.quietPeriodSeconds", note: "for both transports"),
        ReplacedRealtimeSetting(
            key: "graphQLPongTimeoutSeconds", environmentVariable: "VORTEX_REALTIME_GRAPHQL_PONG_TIMEOUT",
            replacement: "liveness.pongTimeoutSeconds", note: "for both transports"),
    ]

    /// The prefix of every variable the table reads; an unknown variable with it is an error (a typo must not pass).
    package static let environmentPrefix = "VORTEX_REALTIME_"

    /// The setting with `key`, if any.
    package static func setting(forKey key: String) -> RealtimeSetting? { settingsByKey[key] }

    /// The setting read from the environment variable `name`, if any.
    package static func setting(forEnvironmentVariable name: String) -> RealtimeSetting? {
        settings.first { $0.environmentVariable == name }
    }

    /// The groups of nested keys (`liveness`, `failover`): objects in a file.
    static let groups: Set<String> = Set(settings.compactMap { $0.key.split(separator: ".").dropLast().first.map(String.init) })

    private static let settingsByKey = Dictionary(uniqueKeysWithValues: settings.map { ($0.key, $0) })
}
