import ArgumentParser
import LocalBackend

/// `vortex-realtime token`: a development JWT for the local backend.
struct TokenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token", abstract: "Print a development HS256 JWT (sub = the user) for the local backend.")

    @Option(help: "The backend's --jwt-secret (at least 32 bytes).")
    var secret: String

    @Option(help: "The user id (the token's sub).")
    var user: String

    @Option(help: "Lifetime in seconds.")
    var ttl: Int = 3600

    func run() throws {
        do {
            StandardStreams.output(try DevelopmentToken.make(secret: secret, user: user, ttl: .seconds(ttl)))
        } catch {
            let argument =
                switch error as? DevelopmentToken.Failure {
                case .secretTooShort?: "--secret"
                case .emptyUser?: "--user"
                default: "--ttl"
                }
            throw CLIFailure.badArgument(argument, "\(error)")
        }
    }
}
