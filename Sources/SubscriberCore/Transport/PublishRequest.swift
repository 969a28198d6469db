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
    /// Positions (in the request) of the events the reply listed neither as accepted nor as refused: their outcome is
    /// unknown, so retrying them may publish them twice.
    public var unaccounted: [Int]

    /// Creates a result.
    public init(successful: [PublishedEvent], failed: [FailedEvent], unaccounted: [Int] = []) {
        self.successful = successful
        self.failed = failed
        self.unaccounted = unaccounted
    }

    /// Whether every event was accepted: none refused and none left out of the reply.
    public var allSucceeded: Bool { failed.isEmpty && unaccounted.isEmpty }
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
    /// The identifier the service gave the event; empty when it gave none.
    public var identifier: String
    /// The event's position in the request.
    public var index: Int
    /// The service's error code, when given as a number (or as text holding one).
    public var code: Int?
    /// The service's message, when given.
    public var message: String?
    /// The service's error code when given as text that is not a number, for example `"BadRequestException"`.
    public var errorType: String?

    /// Creates a refused event.
    public init(identifier: String, index: Int, code: Int? = nil, message: String? = nil, errorType: String? = nil) {
        self.identifier = identifier
        self.index = index
        self.code = code
        self.message = message
        self.errorType = errorType
    }

    /// The keys of a reply's `failed` entry: the SDKs disagree (Kotlin `code`/`message`, Swift `errorCode`/`errorMessage`).
    private enum ReplyKeys: String, CodingKey { case identifier, index, code, message, errorCode, errorMessage, errorType }

    /// Decodes either SDK's keys; a code may be a number or text. Only `index` is required: a refusal the reply names
    /// loosely must not turn the whole reply, accepted events included, into an error.
    public init(from decoder: any Decoder) throws {
        let keys = try decoder.container(keyedBy: ReplyKeys.self)
        func text(_ key: ReplyKeys) -> String? { try? keys.decodeIfPresent(String.self, forKey: key) }
        let codeKey: ReplyKeys = keys.contains(.code) ? .code : .errorCode
        let codeText = text(codeKey)
        index = try keys.decode(Int.self, forKey: .index)
        identifier = text(.identifier) ?? ""
        message = text(.message) ?? text(.errorMessage)
        code = (try? keys.decodeIfPresent(Int.self, forKey: codeKey)) ?? codeText.flatMap { Int($0) }
        errorType = code == nil ? codeText ?? text(.errorType) : nil
    }
}
