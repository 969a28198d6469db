import Logging

/// Logs go to stderr so stdout carries only the command's data lines.
enum CLILogging {
    static func bootstrap(verbose: Bool, level: Logger.Level = .warning) -> Logger {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = verbose ? .debug : level
            return handler
        }
        return Logger(label: "vortex-realtime")
    }
}
