import ArgumentParser
import Foundation
import LocalBackend
import Logging

/// `vortex-realtime serve`: the local Vortex backend (AppSync Events + legacy GraphQL on one port).
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the local backend that speaks AppSync Events and legacy GraphQL subscriptions.",
        discussion: """
            The first stdout line is one JSON object with the URLs: {"http":…,"realtime":…,"graphql":…,"admin":…}.
            Logs go to stderr. SIGINT/SIGTERM shut it down cleanly. --admin enables POST /vortex/events (domain events)
            and POST /vortex/faults (fault injection): development only. With --tls-certificate and --tls-key every URL is
            https:// or wss://.
            """
    )

    @Option(help: "The address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "The port (0 picks a free one).")
    var port = 0

    @Option(name: .customLong("api-key"), help: "An accepted AppSync API key (repeatable).")
    var apiKeys: [String] = []

    @Option(name: .customLong("jwt-secret"), help: "HS256 secret for JWTs (sub = user id); at least 32 bytes.")
    var jwtSecret: String?

    @Option(name: .customLong("iam-access-key"), help: "Accepted IAM access key id.")
    var iamAccessKey: String?

    @Option(name: .customLong("iam-secret-key"), help: "The secret of --iam-access-key.")
    var iamSecretKey: String?

    @Option(help: "The region IAM signatures must use.")
    var region = "us-east-1"

    @Option(name: .customLong("ka-interval"), help: "Seconds between AppSync ka messages.")
    var kaInterval: Double = 60

    @Option(name: .customLong("connection-timeout-ms"), help: "connectionTimeoutMs announced in connection_ack.")
    var connectionTimeoutMs = 300_000

    @Option(name: .customLong("max-connection-duration"), help: "Close AppSync connections with 1000 after this many seconds.")
    var maxConnectionDuration: Double?

    @Option(name: .customLong("graphql-init-timeout"), help: "Seconds a /graphql socket may wait for connection_init (then 4408).")
    var graphQLInitTimeout: Double = 3

    @Option(
        name: .customLong("namespace"),
        help: ArgumentHelp(
            "A channel namespace to declare (repeatable). Without any: "
                + "\(LocalBackendConfiguration.defaultNamespaces.joined(separator: " and ")). Declared namespaces replace "
                + "those defaults; domain events fan out on vortex-app channels, so keep vortex-app to receive them.",
            valueName: "name"))
    var namespaces: [String] = []

    @Option(help: "A user directory JSON file (default: the embedded sample).")
    var directory: String?

    @Option(
        name: .customLong("tls-certificate"),
        help: ArgumentHelp("Serve https:// and wss://: the server's PEM certificate chain (with --tls-key).", valueName: "path"))
    var tlsCertificate: String?

    @Option(name: .customLong("tls-key"), help: ArgumentHelp("The PEM private key of --tls-certificate.", valueName: "path"))
    var tlsKey: String?

    @Flag(help: "Enable /vortex/events and /vortex/faults.")
    var admin = false

    @Flag(help: "Log at debug level.")
    var verbose = false

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port: \(port) is not a port number") }
        if let jwtSecret, jwtSecret.utf8.count < DevelopmentToken.minimumSecretBytes {
            throw ValidationError("--jwt-secret: at least \(DevelopmentToken.minimumSecretBytes) bytes")
        }
        guard (iamAccessKey == nil) == (iamSecretKey == nil) else {
            throw ValidationError("--iam-access-key: give --iam-access-key and --iam-secret-key together")
        }
        guard (tlsCertificate == nil) == (tlsKey == nil) else {
            throw ValidationError("--tls-certificate: give --tls-certificate and --tls-key together")
        }
        guard kaInterval > 0 else { throw ValidationError("--ka-interval: must be positive") }
        guard graphQLInitTimeout > 0 else { throw ValidationError("--graphql-init-timeout: must be positive") }
        guard connectionTimeoutMs > 0 else { throw ValidationError("--connection-timeout-ms: must be positive") }
        if let maxConnectionDuration, maxConnectionDuration <= 0 { throw ValidationError("--max-connection-duration: must be positive") }
        if !namespaces.isEmpty, let problem = LocalBackendConfiguration.namespaceProblem(namespaces) {
            throw ValidationError("--namespace: \(problem)")
        }
    }

    func run() async throws {
        let logger = CLILogging.bootstrap(verbose: verbose, level: .info)
        var configuration = LocalBackendConfiguration()
        configuration.host = host
        configuration.port = port
        configuration.apiKeys = apiKeys
        configuration.jwtSecret = jwtSecret
        if let iamAccessKey, let iamSecretKey { configuration.iamCredentials = [iamAccessKey: iamSecretKey] }
        configuration.region = region
        configuration.keepAliveInterval = .milliseconds(Int64(kaInterval * 1000))
        configuration.connectionTimeoutMs = connectionTimeoutMs
        configuration.maxConnectionDuration = maxConnectionDuration.map { .milliseconds(Int64($0 * 1000)) }
        configuration.graphQLInitTimeout = .milliseconds(Int64(graphQLInitTimeout * 1000))
        configuration.admin = admin
        if !namespaces.isEmpty { configuration.namespaces = namespaces }
        if let directory {
            do { configuration.directory = try UserDirectory.load(from: directory) } catch {
                throw CLIFailure.badArgument("--directory", "\(error)")
            }
        }
        if let tlsCertificate, let tlsKey {
            configuration.tls = LocalBackendTLS(
                certificateChainPEM: try Self.read(tlsCertificate, option: "--tls-certificate"),
                privateKeyPEM: try Self.read(tlsKey, option: "--tls-key"))
        }
        let termination = await SignalWatcher.arm()  // before the endpoints line, which callers answer with a signal
        let server = LocalBackendServer(configuration: configuration, logger: logger)
        let endpoints: LocalBackendEndpoints
        do { endpoints = try await server.start() } catch { throw CLIFailure.runtime("cannot start: \(error)") }
        StandardStreams.output(JSONLine.encode(endpoints))
        await termination.waitForTermination()
        logger.info("shutting down")
        await server.stop()
    }

    /// The text of the file an option names; a file that cannot be read fails with the option's name.
    private static func read(_ path: String, option: String) throws -> String {
        do { return try String(contentsOfFile: path, encoding: .utf8) } catch {
            throw CLIFailure.badArgument(option, "cannot read \(path)")
        }
    }
}
