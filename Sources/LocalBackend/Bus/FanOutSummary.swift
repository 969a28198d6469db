/// What one domain event fan-out did.
public struct FanOutSummary: Sendable, Codable, Equatable {
    /// The event's `eventType`, for example `device/presenceChanged`.
    public var eventType: String
    /// The users the event was published to (their user channels), sorted.
    public var deliveredTo: [String]
    /// The channels published to, in the order of ``deliveredTo``.
    public var channels: [String]
    /// How many `data` messages were queued for AppSync subscribers (0 when nobody listens).
    public var frames: Int
    /// The event JSON exactly as published.
    public var event: String

    /// Creates a summary.
    public init(eventType: String, deliveredTo: [String], channels: [String], frames: Int, event: String) {
        self.eventType = eventType
        self.deliveredTo = deliveredTo
        self.channels = channels
        self.frames = frames
        self.event = event
    }
}
