import Logging
import SubscriberCore

/// Collects a notifier's log lines (level, message, metadata) for tests that check what is logged.
final class NotifierLogLines: LogHandler, Sendable {
    private let lines = Locked<[String]>([])

    var metadata: Logger.Metadata {
        get { [:] }
        set {}
    }
    var logLevel: Logger.Level {
        get { .trace }
        set {}
    }
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { nil }
        set {}
    }

    func log(event: LogEvent) {
        let metadata = (event.metadata ?? [:]).map { "\($0.key)=\($0.value)" }.sorted().joined(separator: " ")
        lines.withLock { $0.append("\(event.level) \(event.message) \(metadata)") }
    }

    /// The lines containing `text`.
    func matching(_ text: String) -> [String] { lines.withLock { $0.filter { $0.contains(text) } } }
}
