import ArgumentParser
import Logging

/// `--verbose`: the transport-details switch of the commands that open a transport (`tail`, `publish`, `watch`),
/// declared once. `serve` keeps its own: there it raises the server's log level from info to debug.
struct LoggingOptions: ParsableArguments {
    @Flag(help: "Log transport details to stderr.")
    var verbose = false

    /// Sends logs to stderr, at debug level with `--verbose`, else warnings and worse.
    func bootstrap() -> Logger { CLILogging.bootstrap(verbose: verbose) }
}
