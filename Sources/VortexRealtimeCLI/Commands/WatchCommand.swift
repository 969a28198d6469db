import ArgumentParser
import BackendNotifier
import Composition
import Foundation
import Logging
import RealtimeDrill
import RealtimeStore
import SubscriberCore

/// `vortex-realtime watch`: the notifier's streams as JSON lines, on either transport.
struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Print every value of the notifier's streams as {\"stream\":…,\"value\":…} lines.",
        discussion: """
            Configure with --config FILE (keys of docs/configuration.md; VORTEX_REALTIME_* variables override it) or with
            --transport and --endpoint. Connection events (live, resumed with the gap, switches) go to stderr.
            With --store (and --org), prints the RealtimeStore instead, after each coalesced change, as
            {"stale":[KIND,…],"state":{…}}: the state in the shape of the local backend's GET /vortex/state. With
            --backfill-endpoint (the backend's HTTP root), every window is healed from that endpoint with the --token
            credentials; once the store is current, "state" equals the endpoint's body read through the payload models.
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

    @Flag(help: "Print the RealtimeStore as {\"stale\":[…],\"state\":…} lines after each coalesced change (needs --org).")
    var store = false

    @Option(help: "With --store: the local backend's HTTP root (or its /vortex/state URL), the backfill of every kind.")
    var backfillEndpoint: String?

    @OptionGroup var logging: LoggingOptions

    func validate() throws {
        if config == nil {
            guard transport != nil else { throw ValidationError("--transport: required without --config") }
            guard endpoint != nil else { throw ValidationError("--endpoint: required without --config") }
        } else if transport != nil || endpoint != nil {
            throw ValidationError("--config: give either --config or --transport/--endpoint, not both")
        }
        try credentials.requireExactlyOne(iam: false)
        try identity.require(user: true, org: store)
        if let backfillEndpoint {
            guard store else { throw ValidationError("--backfill-endpoint: only with --store") }
            do {
                _ = try StateEndpoint(
                    base: backfillEndpoint, organizationId: identity.org ?? "", userId: identity.user ?? "", authorization: nil)
            } catch {
                throw ValidationError("--backfill-endpoint: not an http(s) URL")
            }
        }
    }

    func run() async throws {
        let logger = logging.bootstrap()
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
        if store, let org = identity.org, let user = identity.user {
            let endpoint = try backfillEndpoint.map {
                try StateEndpoint(base: $0, organizationId: org, userId: user, authorization: credentials.token)
            }
            await Self.watchStore(stack.notifier, organizationId: org, userId: user, backfill: endpoint, until: termination)
        } else {
            try await Self.watch(stack.notifier, api: api, until: termination)
        }
        await stack.shutdown()
    }

    /// Prints the store after each coalesced change until SIGINT/SIGTERM.
    static func watchStore(
        _ notifier: BackendNotifier, organizationId: String, userId: String, backfill: StateEndpoint?, until termination: SignalWatcher
    ) async {
        let store = await MainActor.run {
            let store = RealtimeStore(notifier: notifier)
            backfill?.register(on: store)
            return store
        }
        await watching(notifier, until: termination) { group in
            group.addTask { await store.run() }
            let changes = await store.changes()
            group.addTask {
                for await _ in changes {
                    let line = await MainActor.run { () -> String in
                        let stale = store.staleKinds.map(\.rawValue).sorted().map { #""\#($0)""# }.joined(separator: ",")
                        let state = (try? StoreStateDocument.json(of: store, organizationId: organizationId, userId: userId)) ?? "null"
                        return #"{"stale":[\#(stale)],"state":\#(state)}"#
                    }
                    StandardStreams.output(line)
                }
            }
        }
    }

    /// Prints every value of the chosen API until SIGINT/SIGTERM (or a closed stdout).
    static func watch(_ notifier: BackendNotifier, api: API, until termination: SignalWatcher) async throws {
        await watching(notifier, until: termination) { group in
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
        }
    }

    /// Runs the tasks `start` adds to a group, beside one that reports the notifier's connection events on stderr,
    /// until SIGINT/SIGTERM (or a closed stdout); then cancels them all.
    private static func watching(
        _ notifier: BackendNotifier, until termination: SignalWatcher, _ start: (inout TaskGroup<Void>) async -> Void
    ) async {
        await withTaskGroup(of: Void.self) { group in
            await start(&group)
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
