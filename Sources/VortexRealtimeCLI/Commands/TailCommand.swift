import AppSyncEventsTransport
import AppSyncEventsWire
import ArgumentParser
import Composition
import Foundation
import GraphQLTransport
import Logging
import SubscriberCore

/// `vortex-realtime tail`: subscribe and print one JSON line per event.
struct TailCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tail",
        abstract: "Subscribe and print one JSON line per event on stdout.",
        discussion: """
            AppSync Events (default): each event prints as {"channel":"<the channel as subscribed>","event":<the event>}.
            GraphQL (--transport graphql): each `next` prints its `data` object, {"<root field or alias>":<value as
            sent>}; `errors` sent beside it go to stderr as "errors: […]".
            Connection states (with why the connection was lost or refused) and errors go to stderr. SIGINT/SIGTERM, or a closed stdout (`| head -1`), close the
            connection cleanly and exit 0; a subscription the server rejects or ends with an error exits 1.
            """
    )

    /// Which protocol to speak.
    enum Transport: String, ExpressibleByArgument, CaseIterable {
        case appsync, graphql
    }

    @Option(help: "appsync (default) or graphql.")
    var transport: Transport = .appsync

    @Option(help: "AppSync: the HTTP URL ending in /event. GraphQL: the ws(s):// URL of the endpoint.")
    var endpoint: String

    @OptionGroup var auth: CredentialOptions

    @Option(
        name: .customLong("channel"), help: "AppSync: a channel to subscribe to (repeatable); a final /* subscribes to everything below.")
    var channels: [String] = []

    @Option(help: "GraphQL: the subscription document.")
    var query: String?

    @Option(help: "GraphQL: the variables as a JSON object.")
    var variables: String?

    @Option(name: .customLong("operation-name"), help: "GraphQL: the operation name.")
    var operationName: String?

    @Option(help: "Reconnect policy: fixed:SECONDS or exponential:BASE:MAX[:jitter=J] (optionally :attempts=N).")
    var reconnect: String = "exponential:1:10"

    @Option(
        name: [.customLong("quiet-period"), .customLong("ping-interval")],
        help: "Both transports: ping after this many seconds without any frame (0: never). Default 30. (--ping-interval: the old name.)")
    var quietPeriod: Double = 30

    @Option(
        name: .customLong("pong-timeout"),
        help: "Both transports: seconds a ping may wait for its pong before the link counts as dead. Default 10.")
    var pongTimeout: Double = 10

    @OptionGroup var logging: LoggingOptions

    func validate() throws {
        try auth.requireExactlyOne()
        switch transport {
        case .appsync:
            guard !channels.isEmpty else { throw ValidationError("--channel: give at least one channel") }
            guard query == nil, variables == nil, operationName == nil else {
                throw ValidationError("--query: --query, --variables and --operation-name need --transport graphql")
            }
        case .graphql:
            guard let query, !query.isEmpty else { throw ValidationError("--query: required with --transport graphql") }
            guard channels.isEmpty else { throw ValidationError("--channel: channels are for --transport appsync") }
            if let variables {
                let object = try? JSONSerialization.jsonObject(with: Data(variables.utf8))
                guard object is [String: Any] else { throw ValidationError("--variables: not a JSON object") }
            }
            do { _ = try GraphQLResponseKey.find(in: query, operationName: operationName) } catch {
                throw ValidationError("--query: \(error)")
            }
        }
        guard quietPeriod >= 0, quietPeriod <= 86_400 else {
            throw ValidationError("--quiet-period: expected seconds from 0 to 86400, got \(quietPeriod)")
        }
        guard pongTimeout > 0, pongTimeout <= 86_400 else {
            throw ValidationError("--pong-timeout: expected seconds above 0 and at most 86400, got \(pongTimeout)")
        }
        do { _ = try ReconnectPolicy(validating: reconnect) } catch { throw ValidationError("--reconnect: \(error)") }
    }

    func run() async throws {
        let logger = logging.bootstrap()
        var configuration = RealtimeConfiguration()
        configuration.reconnect = reconnect
        configuration.liveness.quietPeriodSeconds = quietPeriod == 0 ? nil : quietPeriod
        configuration.liveness.pongTimeoutSeconds = pongTimeout
        let subscriptions: [(request: SubscriptionRequest, line: @Sendable (RealtimePayload) -> String)]
        switch transport {
        case .appsync:
            do { _ = try AppSyncEndpoint(endpoint) } catch { throw CLIFailure.badArgument("--endpoint", "\(error)") }
            for channel in channels {
                do { try ChannelName.validate(channel, for: .subscribe) } catch { throw CLIFailure.badArgument("--channel", "\(error)") }
            }
            configuration.transport = .appsync
            configuration.appSyncEndpoint = endpoint
            subscriptions = channels.map { channel in
                (
                    .channel(channel),
                    { payload in
                        #"{"channel":\#(JSONString.quoted(channel)),"event":\#(JSONLine.embed(payload.json))}"#
                    }
                )
            }
        case .graphql:
            do { _ = try GraphQLTransportConfiguration(endpoint) } catch { throw CLIFailure.badArgument("--endpoint", "\(error)") }
            configuration.transport = .graphql
            configuration.graphQLEndpoint = endpoint
            let document = query ?? ""
            let key: String
            do { key = try GraphQLResponseKey.find(in: document, operationName: operationName) } catch {
                throw CLIFailure.badArgument("--query", "\(error)")
            }
            let operation = GraphQLOperation(query: document, operationName: operationName, variablesJSON: variables)
            subscriptions = [(.graphQL(operation), { payload in Self.dataLine(key: key, payload: payload) })]
        }
        do { try configuration.validate() } catch { throw CLIFailure.badArgument("--endpoint", "\(error)") }
        let factory = TransportFactory(configuration: configuration, auth: StaticAuthSession(try auth.credentials()), logger: logger)
        let realtime: any RealtimeTransport
        do { realtime = try factory.make(configuration.transport) } catch { throw CLIFailure.badArgument("--endpoint", "\(error)") }
        if try await Self.run(transport: realtime, subscriptions: subscriptions) { throw ExitCode(1) }
    }

    /// One GraphQL `next` as its `data` object, exactly as the server sent it (rebuilt under its response key only
    /// if a transport did not keep it). `errors` sent beside the data are reported on stderr.
    static func dataLine(key: String, payload: RealtimePayload) -> String {
        if let errors = payload.graphQLErrorsJSON { StandardStreams.error("errors: \(JSONLine.embed(errors))") }
        if let data = payload.graphQLDataJSON { return JSONLine.embed(data) }
        return #"{\#(JSONString.quoted(key)):\#(JSONLine.embed(payload.json))}"#
    }

    /// Subscribes and prints until a signal arrives or every stream has ended.
    /// Returns whether any subscription ended with an error.
    static func run(
        transport: any RealtimeTransport,
        subscriptions: [(request: SubscriptionRequest, line: @Sendable (RealtimePayload) -> String)]
    ) async throws -> Bool {
        let termination = await SignalWatcher.arm()  // before the first line, which a caller may answer with SIGTERM
        let states = await transport.connectionStates()
        let failures = Locked(0)
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await state in states {
                    // Read as the state arrives: the transport records why before it reports the loss.
                    let failure = state == .connected ? nil : transport.lastConnectionFailure
                    StandardStreams.error("state: \(state)" + (failure.map { " (last failure: \($0))" } ?? ""))
                }
                return false
            }
            group.addTask {
                await termination.waitForTermination()
                return true
            }
            group.addTask {
                await withTaskGroup(of: Void.self) { streams in
                    for subscription in subscriptions {
                        let stream = await transport.subscribe(subscription.request)
                        let name = Self.name(of: subscription.request)
                        streams.addTask {
                            do {
                                for try await event in stream {
                                    switch event {
                                    case .live: StandardStreams.error("live: \(name)")
                                    case .payload(let payload): StandardStreams.output(subscription.line(payload))
                                    case .resumed(let gap): StandardStreams.error("resumed: \(name) after a gap \(gap)")
                                    case .lost(let loss): StandardStreams.error("lost: \(name): \(loss)")
                                    }
                                }
                                StandardStreams.error("ended: \(name)")
                            } catch {
                                failures.withLock { $0 += 1 }
                                StandardStreams.error("error: \(name): \(error)")
                            }
                        }
                    }
                }
                return true
            }
            // The first of "signal" or "every stream ended" finishes the command.
            while let finished = await group.next() {
                if finished { break }
            }
            group.cancelAll()
        }
        await transport.disconnect()
        return failures.withLock { $0 } > 0
    }

    private static func name(of request: SubscriptionRequest) -> String {
        switch request.topic {
        case .channel(let channel): channel
        case .graphQL(let operation): operation.operationName ?? "subscription"
        }
    }
}
