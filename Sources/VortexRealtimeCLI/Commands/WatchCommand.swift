import ArgumentParser
import BackendNotifier
import Composition
import Foundation
import Logging
import SubscriberCore

/// `vortex-realtime watch`: the notifier's streams as JSON lines, on either transport.
struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Print every value of the notifier's streams as {\"stream\":…,\"value\":…} lines.",
        discussion: """
            Configure with --config FILE (keys of docs/configuration.md; VORTEX_REALTIME_* variables override it) or with
            --transport and --endpoint. Connection events (live, resumed with the gap, switches) go to stderr.
            """
    )

    /// Which notifier API to print.
    enum API: String, ExpressibleByArgument, CaseIterable {
        case merged, nine
    }

    @Option(help: "A JSON configuration file.")
    var config: String?

    @Option(help: "appsync or graphql (without --config).")
    var transport: RealtimeConfiguration.TransportKind?

    @Option(help: "The endpoint for --transport: AppSync HTTP URL ending in /event, or GraphQL ws(s):// URL.")
    var endpoint: String?

    @OptionGroup var credentials: CredentialOptions

    @OptionGroup var identity: IdentityOptions

    @Option(help: "merged (the legacy five streams) or nine (one stream per channel).")
    var api: API = .nine

    @Flag(help: "Log transport details to stderr.")
    var verbose = false

    func validate() throws {
        if config == nil {
            guard transport != nil else { throw ValidationError("--transport: required without --config") }
            guard endpoint != nil else { throw ValidationError("--endpoint: required without --config") }
        } else if transport != nil || endpoint != nil {
            throw ValidationError("--config: give either --config or --transport/--endpoint, not both")
        }
        try credentials.requireExactlyOne(iam: false)
        try identity.require(user: true)
    }

    func run() async throws {
        let logger = CLILogging.bootstrap(verbose: verbose)
        var base = RealtimeConfiguration()
        if let transport, let endpoint {
            base.transport = transport
            if transport == .appsync { base.appSyncEndpoint = endpoint } else { base.graphQLEndpoint = endpoint }
        }
        if credentials.apiKey != nil { credentials.apply(to: &base) }
        let configuration: RealtimeConfiguration
        do { configuration = try RealtimeConfiguration.load(base: base, file: config) } catch {
            throw CLIFailure.badArgument(config == nil ? "--endpoint" : "--config", "\(error)")
        }
        let auth = StaticAuthSession(try credentials.credentials())
        let termination = await SignalWatcher.arm()  // before any output a caller may answer with a signal
        let stack = try RealtimeStack(
            configuration: configuration, auth: auth, userId: identity.user, organizationId: identity.org, logger: logger)
        await stack.startFailover()
        try await Self.watch(stack.notifier, api: api, until: termination)
        await stack.shutdown()
    }

    /// Prints every value of the chosen API until SIGINT/SIGTERM (or a closed stdout).
    static func watch(_ notifier: BackendNotifier, api: API, until termination: SignalWatcher) async throws {
        await withTaskGroup(of: Void.self) { group in
            func show<T: Encodable & Sendable>(_ stream: AsyncStream<T>, as name: String) {
                group.addTask {
                    for await value in stream { StandardStreams.output(#"{"stream":"\#(name)","value":\#(JSONLine.encode(value))}"#) }
                }
            }
            switch api {
            case .merged:
                show(await notifier.deviceValues(), as: "device")
                show(await notifier.organizationValues(), as: "organization")
            case .nine:
                show(await notifier.devicePresenceValues(), as: "devicePresence")
                show(await notifier.deviceRecordingValues(), as: "deviceRecording")
                show(await notifier.deviceFirmwareValues(), as: "deviceFirmware")
                show(await notifier.licenseValues(), as: "license")
                show(await notifier.planValues(), as: "plan")
                show(await notifier.aiSettingsValues(), as: "aiSettings")
            }
            show(await notifier.archiveValues(), as: "archive")
            show(await notifier.roleValues(), as: "role")
            show(await notifier.revokeValues(), as: "revoke")
            let events = await notifier.connectionEvents()
            group.addTask {
                for await event in events { StandardStreams.error("event: \(event)") }
            }
            await termination.waitForTermination()
            group.cancelAll()
        }
    }
}

extension RealtimeConfiguration.TransportKind: ExpressibleByArgument {}
