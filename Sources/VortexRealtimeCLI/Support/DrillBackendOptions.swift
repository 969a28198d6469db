import ArgumentParser
import Composition
import Foundation
import LocalBackend
import RealtimeDrill
import SubscriberCore

/// Where `parity` and `drill` connect and as whom: the embedded backend (default), a `serve --admin` instance
/// (`--backend URL`), or real endpoints (`--appsync-endpoint` and `--graphql-endpoint`, or a `--config` file holding
/// them) with credentials as everywhere else in the CLI (`--api-key K | --token T | --iam`).
struct DrillBackendOptions: ParsableArguments {
    @Option(help: "embedded (the default without endpoints), or the base URL of a `serve --admin` backend (http://HOST:PORT).")
    var backend: String?

    @Option(name: .customLong("appsync-endpoint"), help: "The AppSync Events HTTP URL (…/event).")
    var appSyncEndpoint: String?

    @Option(name: .customLong("graphql-endpoint"), help: "The GraphQL WebSocket URL (wss://…/graphql).")
    var graphQLEndpoint: String?

    @Option(help: "A JSON configuration file: endpoints, graphQLOperations, graphQLConnectionPayload (VORTEX_REALTIME_* override it).")
    var config: String?

    @OptionGroup var credentials: CredentialOptions

    /// Embedded backend: `--user` defaults to u-1 of the sample directory, `--org` to the user's in the directory.
    @OptionGroup var identity: IdentityOptions

    @Option(name: .customLong("device-group"), help: "A device group the user may see (device and archive events need one).")
    var deviceGroup: String?

    @Option(
        help:
            "Embedded backend: a user directory JSON file ({\"users\":[{\"id\":…,\"organizationId\":…,\"role\":…,\"deviceGroups\":[…]}]}).")
    var directory: String?

    /// Which backend the options name.
    enum Mode: Equatable {
        case embedded
        case remote(base: String)
        case endpoints
    }

    var mode: Mode {
        if let backend, backend != "embedded" { return .remote(base: backend.hasSuffix("/") ? String(backend.dropLast()) : backend) }
        if backend == nil && (appSyncEndpoint != nil || graphQLEndpoint != nil || config != nil) { return .endpoints }
        return .embedded
    }

    func validate() throws {
        if let backend, backend != "embedded" {
            guard let url = URL(string: backend), url.scheme == "http" || url.scheme == "https", url.host != nil else {
                throw ValidationError("--backend: expected embedded or http(s)://HOST:PORT")
            }
        }
        switch mode {
        case .embedded:
            if appSyncEndpoint != nil || graphQLEndpoint != nil || config != nil {
                throw ValidationError("--backend: embedded takes no --appsync-endpoint, --graphql-endpoint or --config")
            }
            guard credentials.count == 0 else { throw ValidationError("--token: the embedded backend mints its own token for --user") }
        case .remote:
            guard credentials.token != nil, credentials.apiKey == nil, !credentials.iam else {
                throw ValidationError("--token: required with a remote --backend (a JWT for --user)")
            }
            guard identity.user != nil else { throw ValidationError("--user: required with a remote --backend") }
            if directory != nil { throw ValidationError("--directory: only for the embedded backend") }
        case .endpoints:
            try credentials.requireExactlyOne()
            guard identity.user != nil else { throw ValidationError("--user: required with real endpoints") }
            if directory != nil { throw ValidationError("--directory: only for the embedded backend") }
        }
        try credentials.requireNotEmpty()
    }

    /// A running backend and the target on it; ``shutdown()`` stops what was started.
    struct Resolved: Sendable {
        var target: DrillTarget
        /// The embedded or remote `serve` backend (for the admin trigger and the embedded traffic), if any.
        var backend: (any DrillBackend)?

        func shutdown() async { await backend?.shutdown() }
    }

    /// Starts the embedded backend or reads the configuration; `adminEndpoint` adds an admin URL to real endpoints.
    func resolve(adminEndpoint: String? = nil) async throws -> Resolved {
        switch mode {
        case .embedded:
            return try await resolveEmbedded()
        case .remote(let base):
            let wsBase = base.replacingOccurrences(of: "https://", with: "wss://").replacingOccurrences(of: "http://", with: "ws://")
            let endpoints = LocalBackendEndpoints(
                http: appSyncEndpoint ?? base + "/event", realtime: wsBase + "/event/realtime",
                graphql: graphQLEndpoint ?? wsBase + "/graphql",
                admin: adminEndpoint ?? base + "/vortex")
            let remote = RemoteDrillBackend(endpoints: endpoints, token: credentials.token ?? "")
            var configuration = try loadConfiguration()
            configuration.appSyncEndpoint = endpoints.http
            configuration.graphQLEndpoint = endpoints.graphql
            try check(configuration)
            let target = DrillTarget(
                configuration: configuration, auth: StaticAuthSession(.bearerToken(credentials.token ?? "")), identity: givenIdentity)
            return Resolved(target: target, backend: remote)
        case .endpoints:
            var configuration = try loadConfiguration()
            if let appSyncEndpoint { configuration.appSyncEndpoint = appSyncEndpoint }
            if let graphQLEndpoint { configuration.graphQLEndpoint = graphQLEndpoint }
            guard configuration.appSyncEndpoint != nil else {
                throw CLIFailure.badArgument("--appsync-endpoint", "required (or appSyncEndpoint in --config)")
            }
            guard configuration.graphQLEndpoint != nil else {
                throw CLIFailure.badArgument("--graphql-endpoint", "required (or graphQLEndpoint in --config)")
            }
            let auth = StaticAuthSession(try credentials.credentials())
            credentials.apply(to: &configuration)
            try check(configuration)
            var backend: (any DrillBackend)?
            if let adminEndpoint {
                backend = RemoteDrillBackend(
                    endpoints: LocalBackendEndpoints(
                        http: configuration.appSyncEndpoint ?? "", realtime: "", graphql: configuration.graphQLEndpoint ?? "",
                        admin: adminEndpoint),
                    token: credentials.token ?? "")
            }
            let target = DrillTarget(configuration: configuration, auth: auth, identity: givenIdentity)
            return Resolved(target: target, backend: backend)
        }
    }

    /// Who the options name, as given (remote backends and real endpoints: no directory to fill them from).
    private var givenIdentity: DrillIdentity {
        DrillIdentity(user: identity.user ?? "", organization: identity.org, deviceGroup: deviceGroup)
    }

    private func resolveEmbedded() async throws -> Resolved {
        var directory = UserDirectory.sample
        if let path = self.directory {
            do { directory = try UserDirectory.load(from: path) } catch { throw CLIFailure.badArgument("--directory", "\(error)") }
        }
        let userID = identity.user ?? (self.directory == nil ? DrillIdentity.sample.user : directory.users.first?.id ?? "")
        guard let member = directory.user(id: userID) else {
            throw CLIFailure.badArgument("--user", "\(userID) is not in the embedded backend's directory (give --directory FILE)")
        }
        let identity = DrillIdentity(
            user: member.id, organization: identity.org ?? member.organizationId, deviceGroup: deviceGroup ?? member.deviceGroups.first)
        let embedded: EmbeddedDrillBackend
        do { embedded = try await EmbeddedDrillBackend.start(directory: directory, admin: false) } catch {
            throw CLIFailure.runtime("cannot start the local backend: \(error)")
        }
        let runner = DrillRunner(backend: embedded, identity: identity)
        return Resolved(target: runner.target, backend: embedded)
    }

    /// The `--config` file and the environment.
    private func loadConfiguration() throws -> RealtimeConfiguration {
        try RealtimeConfiguration.loadForCommandLine(config: config)
    }

    /// Both transports must be buildable from it.
    private func check(_ configuration: RealtimeConfiguration) throws {
        for kind in RealtimeConfiguration.TransportKind.allCases {
            var candidate = configuration
            candidate.transport = kind
            candidate.failover.enabled = false
            do { try candidate.validate() } catch {
                let argument = config == nil ? (kind == .appsync ? "--appsync-endpoint" : "--graphql-endpoint") : "--config"
                throw CLIFailure.badArgument(argument, "\(error)")
            }
        }
    }
}
