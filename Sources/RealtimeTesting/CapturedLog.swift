import Logging
import SubscriberCore

/// A log handler that keeps every line (`level message key=value …`, metadata sorted), for tests that check what was
/// logged, that a secret never was, or wait for a decision that has no other visible effect.
public final class CapturedLog: LogHandler, Sendable {
    private let lines = Locked<[String]>([])

    /// Creates an empty log.
    public init() {}

    /// Not kept: lines carry only the metadata logged with them.
    public var metadata: Logger.Metadata {
        get { [:] }
        set {}
    }
    /// Everything is kept.
    public var logLevel: Logger.Level {
        get { .trace }
        set {}
    }
    /// Not kept.
    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { nil }
        set {}
    }

    /// Keeps the line.
    public func log(event: LogEvent) {
        let metadata = (event.metadata ?? [:]).map { "\($0.key)=\($0.value)" }.sorted().joined(separator: " ")
        lines.withLock { $0.append("\(event.level) \(event.message) \(metadata)") }
    }

    /// Every line so far.
    public var captured: [String] { lines.withLock { $0 } }

    /// The lines containing `text`.
    public func matching(_ text: String) -> [String] { lines.withLock { $0.filter { $0.contains(text) } } }

    /// A logger writing here, at `level`.
    public func logger(label: String = "test", level: Logger.Level = .trace) -> Logger {
        var logger = Logger(label: label) { _ in self }
        logger.logLevel = level
        return logger
    }

    /// Waits until a line containing `text` was logged.
    public func waitFor(_ text: String, timeout: Double = scriptedWait) async throws {
        try await withTestTimeout(timeout, "a log line with \"\(text)\"") { [lines] in
            while !lines.withLock({ $0.contains { $0.contains(text) } }) { try await TestTime.pollPause() }
        }
    }
}
