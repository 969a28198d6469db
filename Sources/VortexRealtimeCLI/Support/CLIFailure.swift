/// A failure the CLI reports as one line on stderr with a specific exit status.
struct CLIFailure: Error {
    let message: String
    let exitCode: Int32

    /// Bad input (exit 2): the message names the argument.
    static func badArgument(_ argument: String, _ problem: String) -> CLIFailure {
        CLIFailure(message: "\(argument): \(problem)", exitCode: 2)
    }

    /// A runtime failure (exit 1).
    static func runtime(_ message: String) -> CLIFailure {
        CLIFailure(message: message, exitCode: 1)
    }
}
