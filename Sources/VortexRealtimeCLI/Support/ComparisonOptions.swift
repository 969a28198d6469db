import ArgumentParser

/// `--tolerance S`, `--json`: what the commands that compare the two transports' events (`parity`, `drill`) take,
/// declared once.
struct ComparisonOptions: ParsableArguments {
    @Option(help: "Seconds two sides' timestamps of one event may differ (drill: with the command and none triggers).")
    var tolerance: Double = 2

    @Flag(help: "Print the report as JSON.")
    var json = false

    func validate() throws {
        guard tolerance >= 0 else { throw ValidationError("--tolerance: must not be negative") }
    }
}
