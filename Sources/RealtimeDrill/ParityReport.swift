import Foundation

/// The parity check's result with the `admin` trigger: per stream, what each transport delivered for the same
/// published events.
public struct ParityReport: Sendable, Codable, Equatable {
    /// One stream.
    public struct Stream: Sendable, Codable, Equatable {
        /// The stream's name (`devicePresence`, `device`, ...).
        public var stream: String
        /// Events published that this stream should deliver.
        public var published: Int
        /// Values received on AppSync Events.
        public var appsync: Int
        /// Values received on GraphQL.
        public var graphql: Int
        /// Whether both sequences are identical, value for value, in order.
        public var identical: Bool
        /// The first difference, when not identical.
        public var difference: String?
    }

    /// Every stream.
    public var streams: [Stream]

    /// Creates a report.
    public init(streams: [Stream]) { self.streams = streams }
    /// Whether every stream delivered everything, identically, on both transports.
    public var passed: Bool { streams.allSatisfy { $0.identical && $0.appsync == $0.published && $0.graphql == $0.published } }
}
