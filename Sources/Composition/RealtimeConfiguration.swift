import BackendNotifier
import Foundation
import SubscriberCore

/// Everything that picks and tunes the real-time stack. Built in code, from a JSON file, from environment variables,
/// or layered (code, then file, then environment), and validated with readable errors.
///
/// Every setting (key, environment variable, kind, default, bounds, doc line) is declared once, in
/// ``RealtimeSettingsTable``: the file and environment sources, ``validate()`` and the reference in
/// `docs/configuration.md` all come from it. The comments below say what each property is; the table is the reference.
public struct RealtimeConfiguration: Sendable, Equatable, Codable {
    /// Which transport the notifier uses.
    public enum TransportKind: String, Sendable, Codable, CaseIterable, CustomStringConvertible {
        /// AWS AppSync Events.
        case appsync
        /// Legacy GraphQL subscriptions (graphql-transport-ws): the rollback path.
        case graphql
        public var description: String { rawValue }
        /// The other transport.
        public var other: TransportKind { self == .appsync ? .graphql : .appsync }
    }

    /// How AppSync Events requests are authorized.
    public enum AuthMode: String, Sendable, Codable, CaseIterable {
        /// The app's `AuthSession` supplies the credentials (Cognito JWT, Lambda token or IAM): the default.
        case session
        /// A fixed API key from ``apiKey`` (development and tools).
        case apiKey
    }

    /// The transport to use.
    public var transport: TransportKind = .appsync
    /// AppSync Events HTTP URL ending in `/event`.
    public var appSyncEndpoint: String?
    /// GraphQL WebSocket URL (`wss://…/graphql`).
    public var graphQLEndpoint: String?
    /// How AppSync requests are authorized.
    public var authMode: AuthMode = .session
    /// The API key when ``authMode`` is `apiKey`.
    public var apiKey: String?
    /// Reconnect policy, `fixed:SECONDS` or `exponential:BASE:MAX[:jitter=J][:attempts=N]`.
    public var reconnect = "exponential:1:10"
    /// Seconds to wait for the protocol's connection acknowledgement.
    public var ackTimeoutSeconds: Double = 15
    /// AppSync: rotate connections before this many seconds; `nil` never.
    public var maxConnectionDurationSeconds: Double? = 86_400
    /// How links prove they are alive, on both transports: pings after a quiet period, pong and probe timeouts.
    public var liveness = LivenessConfiguration()
    /// Events buffered per subscription along the whole path: each transport subscription's buffer and each notifier
    /// observer's buffer. Set it at or above the largest burst the app must receive complete. A consumer takes its
    /// whole queue at once, so up to twice this many events may be held per stream.
    public var bufferLimit = 1024
    /// What a full observer buffer drops.
    public var bufferOverflow: ObserverBufferPolicy.Overflow = .dropOldest
    /// Seconds in the background before the connection closes.
    public var backgroundGraceSeconds: Double = 30
    /// Seconds a transport switch may take to get every stream live.
    public var switchTimeoutSeconds: Double = 15
    /// Seconds the old transport goes on delivering once every stream of a planned switch is live on the new one.
    public var switchSettleSeconds: Double = 0.5
    /// Seconds without a live connection (while signed in and in the foreground) before the notifier reports
    /// `networkError`.
    public var networkErrorAfterSeconds: Double = 60
    /// The app's own GraphQL operation per upstream (`device`, `organization`, `archive`, `role`, `revoke`), replacing
    /// the default documents for a legacy server whose schema differs. Check them with `vortex-realtime preflight`.
    public var graphQLOperations: [String: GraphQLOperationConfiguration]?
    /// The GraphQL `connection_init` payload as a JSON object template with `${token}` / `${apiKey}` placeholders
    /// (``ConnectionPayloadTemplate``), for a legacy server that expects another shape than `{"Authorization":…}`;
    /// `nil`: the transport's default. A file may give it as an object or as JSON text.
    public var graphQLConnectionPayload: String?
    /// Automatic failover to the other transport (off by default).
    public var failover = FailoverConfiguration()

    /// Creates the defaults (no endpoints: set at least the one ``transport`` needs).
    public init() {}

    /// One app-supplied GraphQL operation. The notifier adds the variables `userId`, `orgId` and `organizationId` the
    /// query declares.
    public struct GraphQLOperationConfiguration: Sendable, Equatable, Codable {
        /// The subscription document.
        public var query: String
        /// The operation name, when the document holds several.
        public var operationName: String?
        /// Creates an operation.
        public init(query: String, operationName: String? = nil) {
            self.query = query
            self.operationName = operationName
        }
    }

    /// Automatic failover settings.
    public struct FailoverConfiguration: Sendable, Equatable, Codable {
        /// Whether failover is on.
        public var enabled = false
        /// Fail over when the active transport has not been connected for this many seconds.
        public var unhealthyAfterSeconds: Double = 60
        /// ...or when it lost an established connection (and reconnected) this many times within
        /// ``failureWindowSeconds``. Failed attempts within one outage count toward ``unhealthyAfterSeconds`` instead;
        /// losses while the device has no network do not count.
        public var maxFailures = 5
        /// The window for ``maxFailures``, in seconds.
        public var failureWindowSeconds: Double = 120
        /// Fail back once the preferred transport has stayed connected this many seconds.
        public var failbackAfterSeconds: Double = 300
        /// Creates the defaults.
        public init() {}
    }

    /// Liveness settings (both transports share them: ``SubscriberCore/LivenessSettings``).
    public struct LivenessConfiguration: Sendable, Equatable, Codable {
        /// Ping a link after this many seconds without any inbound frame; `nil` (JSON `null`, env `0`) never pings.
        public var quietPeriodSeconds: Double? = 30
        /// A ping's pong may take this many seconds before the link counts as dead.
        public var pongTimeoutSeconds: Double = 10
        /// A probe's pong (network interface change, `verifyConnection()` on foregrounding) may take this many
        /// seconds.
        public var probeTimeoutSeconds: Double = 3
        /// Whether links use WebSocket pings (`false`: the protocol's own check only).
        public var webSocketPings = true
        /// Creates the defaults.
        public init() {}

        /// The transports' settings. A value out of its bounds (`NaN` and infinities included) is the
        /// ``ConfigurationError`` ``RealtimeConfiguration/validate()`` reports for it.
        public var settings: LivenessSettings {
            get throws(ConfigurationError) {
                var whole = RealtimeConfiguration()
                whole.liveness = self
                try whole.checkSettings { $0.key.hasPrefix("liveness.") }
                return LivenessSettings(
                    quietPeriod: quietPeriodSeconds.map { .milliseconds(Int64(($0 * 1000).rounded())) },
                    pongTimeout: .milliseconds(Int64((pongTimeoutSeconds * 1000).rounded())),
                    probeTimeout: .milliseconds(Int64((probeTimeoutSeconds * 1000).rounded())), webSocketPings: webSocketPings)
            }
        }
    }

    // MARK: Derived values

    /// The parsed reconnect policy; a malformed ``reconnect`` is an error that says what is wrong (never a silent
    /// fallback to the default).
    public var reconnectPolicy: ReconnectPolicy {
        get throws(ConfigurationError) {
            do { return try ReconnectPolicy(validating: reconnect) } catch { throw ConfigurationError(["reconnect: \(error)"]) }
        }
    }

    /// The settings both transports' links share (``SubscriberCore/LinkSettings``), from ``reconnect``,
    /// ``ackTimeoutSeconds``, ``liveness`` and ``bufferLimit``; a malformed ``reconnect``, or one of these out of its
    /// bounds (`NaN` and infinities included), is the ``ConfigurationError`` ``validate()`` reports for it.
    public var linkSettings: LinkSettings {
        get throws(ConfigurationError) {
            try checkSettings { ["reconnect", "ackTimeoutSeconds", "bufferLimit"].contains($0.key) || $0.key.hasPrefix("liveness.") }
            return LinkSettings(
                reconnectPolicy: try reconnectPolicy, ackTimeout: .seconds(ackTimeoutSeconds), liveness: try liveness.settings,
                subscriptionBufferLimit: bufferLimit)
        }
    }

    /// Throws the problems ``validate()`` reports for the settings `included` picks, alone (not the rules between
    /// settings, such as the endpoints a transport needs): what code that converts them checks first, so a value built
    /// in code out of its bounds (`NaN`, an infinity) is an error, not a trap in `Duration`.
    func checkSettings(_ included: (RealtimeSetting) -> Bool = { _ in true }) throws(ConfigurationError) {
        let problems = RealtimeSettingsTable.settings.filter(included).flatMap { $0.validate(self) }
        guard problems.isEmpty else { throw ConfigurationError(problems) }
    }

    /// This configuration with every number moved into the bounds its setting declares (``RealtimeSettingsTable``):
    /// `NaN` to the default, a value below or above them to the nearest value they allow. What a conversion that cannot
    /// throw reads, so a value set in code out of its bounds is never a trap there; ``validate()`` still reports it.
    var clampedIntoBounds: RealtimeConfiguration {
        var clamped = self
        for setting in RealtimeSettingsTable.settings { setting.clampIntoBounds(&clamped) }
        return clamped
    }

    /// The notifier's configuration. A number of seconds out of its bounds (`NaN`, an infinity, a negative or huge
    /// value set in code) cannot be a `Duration`: it is clamped into its bounds here (`NaN` to its default), and
    /// ``validate()`` reports it (``RealtimeStack`` refuses such a configuration).
    public var notifierConfiguration: NotifierConfiguration {
        let values = clampedIntoBounds
        var configuration = NotifierConfiguration()
        configuration.bufferPolicy = ObserverBufferPolicy(limit: values.bufferLimit, overflow: bufferOverflow)
        configuration.backgroundGrace = .seconds(values.backgroundGraceSeconds)
        configuration.switchTimeout = .seconds(values.switchTimeoutSeconds)
        configuration.switchSettle = .seconds(values.switchSettleSeconds)
        configuration.networkErrorAfter = .seconds(values.networkErrorAfterSeconds)
        configuration.graphQLOperations = resolvedGraphQLOperations
        return configuration
    }

    /// ``graphQLOperations`` keyed by upstream (unknown keys are dropped here and reported by ``validate()``).
    public var resolvedGraphQLOperations: [NotifierUpstream: GraphQLOperation] {
        var operations: [NotifierUpstream: GraphQLOperation] = [:]
        for (key, value) in graphQLOperations ?? [:] {
            guard let upstream = NotifierUpstream(rawValue: key) else { continue }
            operations[upstream] = GraphQLOperation(query: value.query, operationName: value.operationName)
        }
        return operations
    }
}

extension ObserverBufferPolicy.Overflow: Codable {}

extension RealtimeSetting {
    /// Whether the setting is a number (or the reconnect policy's) that code converts: a `Duration`, a count.
    var isConverted: Bool {
        switch kind {
        case .seconds, .optionalSeconds, .integer, .reconnectPolicy: true
        case .text, .url, .choice, .onOff, .jsonTemplate, .operations: false
        }
    }
}
