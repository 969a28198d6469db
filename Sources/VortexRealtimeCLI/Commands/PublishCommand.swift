import AppSyncEventsTransport
import AppSyncEventsWire
import ArgumentParser
import Composition
import Foundation
import Logging
import SubscriberCore

/// `vortex-realtime publish`: publish events and print the per-event result.
struct PublishCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "publish",
        abstract: "Publish 1 to 5 JSON events to a channel and print the result as JSON.",
        discussion: "Exit status 0 when every event was accepted, 1 when any failed, 2 for bad arguments."
    )

    @Option(help: "The Event API's HTTP URL, ending in /event.")
    var endpoint: String

    @OptionGroup var auth: CredentialOptions

    @Option(help: "The channel to publish to (no wildcard).")
    var channel: String

    @Option(help: "Publish over http (POST /event) or websocket.")
    var via: AppSyncEventsConfiguration.PublishRoute = .http

    @Argument(help: "The events, each a JSON value (1 to 5).")
    var events: [String] = []

    @OptionGroup var logging: LoggingOptions

    func validate() throws { try auth.requireExactlyOne() }

    func run() async throws {
        let logger = logging.bootstrap()
        do { _ = try AppSyncEndpoint(endpoint) } catch { throw CLIFailure.badArgument("--endpoint", "\(error)") }
        do { try ChannelName.validate(channel, for: .publish) } catch { throw CLIFailure.badArgument("--channel", "\(error)") }
        do { try AppSyncPublishLimits.validate(events) } catch { throw CLIFailure.badArgument("EVENT_JSON", "\(error)") }
        var configuration = RealtimeConfiguration()
        configuration.transport = .appsync
        configuration.appSyncEndpoint = endpoint
        configuration.reconnect = "fixed:1:attempts=2"
        let factory = TransportFactory(configuration: configuration, auth: StaticAuthSession(try auth.credentials()), logger: logger)
        let route = via
        let transport: AppSyncEventsTransport
        do { transport = try factory.makeAppSync { $0.publishRoute = route } } catch {
            throw CLIFailure.badArgument("--endpoint", "\(error)")
        }
        let result: PublishResult
        do {
            result = try await transport.publish(PublishRequest(channel: channel, events: events))
        } catch {
            await transport.disconnect()
            throw CLIFailure.runtime("publish failed: \(error)")
        }
        await transport.disconnect()
        StandardStreams.output(JSONLine.encode(result))
        if !result.allSucceeded { throw ExitCode(1) }
    }
}

extension AppSyncEventsConfiguration.PublishRoute: ExpressibleByArgument {}
