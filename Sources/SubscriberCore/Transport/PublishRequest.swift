/// Events to publish to one channel (AppSync Events).
public struct PublishRequest: Sendable, Equatable {
    /// The channel, for example `vortex-app/user/u-1/device/presenceChanged`. Never a wildcard.
    public var channel: String
    /// The events, each a JSON value encoded as text (1 to 5 of them, each at most 240 KB).
    public var events: [String]

    /// Creates a request.
    public init(channel: String, events: [String]) {
        self.channel = channel
        self.events = events
    }
}

/// The per-event outcome of a publish: the service can accept some events and refuse others.
public struct PublishResult: Sendable, Equatable, Codable {
    /// Events the service accepted.
    public var successful: [PublishedEvent]
    /// Events the service refused.
    public var failed: [FailedEvent]

    /// Creates a result.
    public init(successful: [PublishedEvent], failed: [FailedEvent]) {
        self.successful = successful
        self.failed = failed
    }

    /// Whether every event was accepted.
    public var allSucceeded: Bool { failed.isEmpty }
}

/// An accepted event.
public struct PublishedEvent: Sendable, Equatable, Codable {
    /// The identifier the service gave the event.
    public var identifier: String
    /// The event's position in the request.
    public var index: Int

    /// Creates an accepted event.
    public init(identifier: String, index: Int) {
        self.identifier = identifier
        self.index = index
    }
}

/// A refused event.
public struct FailedEvent: Sendable, Equatable, Codable {
    /// The identifier the service gave the event.
    public var identifier: String
    /// The event's position in the request.
    public var index: Int
    /// The service's error code, when given.
    public var code: Int?
    /// The service's message, when given.
    public var message: String?

    /// Creates a refused event.
    public init(identifier: String, index: Int, code: Int? = nil, message: String? = nil) {
        self.identifier = identifier
        self.index = index
        self.code = code
        self.message = message
    }
}
