import Foundation

/// What a subscription stream yields.
public enum SubscriptionEvent: Sendable, Equatable {
    /// The server confirmed the subscription: events published from now on will arrive.
    case live
    /// One event's payload.
    case payload(RealtimePayload)
    /// The subscription is live again after a reconnect (or a connection rotation that could not be seamless):
    /// events published inside `gap` may have been missed; refetch state if that matters.
    case resumed(gap: GapWindow)
    /// Events were lost while the subscription stayed live: the consumer fell behind and the bounded buffer dropped
    /// them, the server reported a `broadcast_error`, or an event could not be read. Events inside `loss.window` may
    /// have been missed; refetch state if that matters. Reported in stream order, where the loss happened.
    case lost(LossReport)
}

/// Events a live subscription lost, and the wall-clock window to refetch.
public struct LossReport: Sendable, Equatable, CustomStringConvertible {
    /// Why events were lost.
    public enum Reason: String, Sendable, Equatable {
        /// The consumer did not keep up and the subscription's bounded buffer dropped the newest events.
        case bufferOverflow
        /// The server could not deliver events to this subscription (AppSync `broadcast_error`).
        case serverError
        /// An event arrived that could not be read (a malformed frame or payload).
        case undecodable
    }

    /// How many events were lost (for `serverError`, at least this many: the server does not say).
    public var count: Int
    /// When: events published inside this window may be missing. Starts a safety margin before the first loss.
    public var window: GapWindow
    /// Why.
    public var reason: Reason

    /// Creates a report.
    public init(count: Int, window: GapWindow, reason: Reason) {
        self.count = count
        self.window = window
        self.reason = reason
    }

    public var description: String { "\(count) event(s) lost (\(reason.rawValue)) in \(window)" }
}

/// The interval during which a subscription was not live, in wall-clock time.
public struct GapWindow: Sendable, Equatable, CustomStringConvertible {
    /// When the subscription stopped being live (the connection was lost).
    public var start: Date
    /// When it was live again.
    public var end: Date

    /// Creates a window.
    public init(start: Date, end: Date) {
        self.start = start
        self.end = end
    }

    /// The length of the window.
    public var duration: TimeInterval { end.timeIntervalSince(start) }

    public var description: String {
        let format = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        return "\(start.formatted(format))...\(end.formatted(format)) (\(String(format: "%.3f", duration)) s)"
    }
}

/// One event's raw JSON, exactly as the server sent it (for AppSync Events: the unescaped `event` string;
/// for GraphQL: the value of the subscription field inside `data`, plus any `errors`).
///
/// The bytes are sliced or unescaped once from the frame; decode them with ``decode(_:using:)``.
public struct RealtimePayload: Sendable, Equatable {
    /// The event's JSON bytes.
    public var json: Data
    /// GraphQL `errors` delivered beside the data, as JSON array text; `nil` when there were none.
    public var graphQLErrorsJSON: Data?
    /// GraphQL: the whole `data` object exactly as the server sent it (``json`` is a slice of it); `nil` for AppSync.
    public var graphQLDataJSON: Data?

    /// Creates a payload.
    public init(json: Data, graphQLErrorsJSON: Data? = nil, graphQLDataJSON: Data? = nil) {
        self.json = json
        self.graphQLErrorsJSON = graphQLErrorsJSON
        self.graphQLDataJSON = graphQLDataJSON
    }

    /// Two payloads are equal when they carry the same event (``json``) and the same errors; the `data` envelope they
    /// were sliced from does not matter.
    public static func == (lhs: RealtimePayload, rhs: RealtimePayload) -> Bool {
        lhs.json == rhs.json && lhs.graphQLErrorsJSON == rhs.graphQLErrorsJSON
    }

    /// The JSON as text (for logs and the CLI).
    public var text: String { String(decoding: json, as: UTF8.self) }

    /// Decodes the JSON into `type`.
    public func decode<T: Decodable>(_ type: T.Type, using decoder: JSONDecoder = JSONDecoder()) throws -> T {
        try decoder.decode(type, from: json)
    }
}
