import AppSyncEventsTransport
import ArgumentParser
import Foundation
import Logging
import SubscriberCore

/// `vortex-realtime tail`: subscribe and print one JSON line per event.
struct TailCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tail",
        abstract: "Subscribe to channels and print one JSON line per event on stdout.",
        discussion: """
            Each event prints as {"channel":"<the channel as subscribed>","event":<the event JSON>}. Connection states
            and errors go to stderr. SIGINT/SIGTERM close the connection cleanly and exit 0; a subscription the server
            rejects ends the command with exit status 1.
            """
    )

    @Option(help: "The Event API's HTTP URL, ending in /event (the real-time URL is derived from it).")
    var endpoint: String

    @OptionGroup var auth: AuthOptions

    @Option(name: .customLong("channel"), help: "A channel to subscribe to (repeatable); a final /* subscribes to everything below.")
    var channels: [String] = []

    @Option(help: "Reconnect policy: fixed:SECONDS or exponential:BASE:MAX (optionally :attempts=N).")
    var reconnect: String = "fixed:10"

    @Flag(help: "Log transport details to stderr.")
    var verbose = false

    func validate() throws {
        guard !channels.isEmpty else { throw ValidationError("--channel: give at least one channel") }
        guard ReconnectPolicy(parsing: reconnect) != nil else {
            throw ValidationError("--reconnect: expected fixed:SECONDS or exponential:BASE:MAX, got \"\(reconnect)\"")
        }
    }

    func run() async throws {
        let logger = CLILogging.bootstrap(verbose: verbose)
        let endpoint: AppSyncEndpoint
        do { endpoint = try AppSyncEndpoint(self.endpoint) } catch { throw CLIFailure.badArgument("--endpoint", "\(error)") }
        for channel in channels {
            do { try ChannelName.validate(channel, for: .subscribe) } catch { throw CLIFailure.badArgument("--channel", "\(error)") }
        }
        var configuration = AppSyncEventsConfiguration(endpoint: endpoint)
        configuration.reconnectPolicy = ReconnectPolicy(parsing: reconnect) ?? .default
        let transport = AppSyncEventsTransport(
            configuration: configuration, auth: StaticAuthSession(try auth.credentials()), logger: logger)
        let failed = try await Self.run(transport: transport, channels: channels)
        if failed { throw ExitCode(1) }
    }

    /// Subscribes to every channel and prints until a signal arrives or every stream has ended.
    /// Returns whether any subscription ended with an error.
    static func run(transport: AppSyncEventsTransport, channels: [String]) async throws -> Bool {
        let states = await transport.connectionStates()
        let failures = Locked(0)
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await state in states { StandardStreams.error("state: \(state)") }
                return false
            }
            group.addTask {
                await SignalWatcher.waitForTermination()
                return true
            }
            group.addTask {
                await withTaskGroup(of: Void.self) { streams in
                    for channel in channels {
                        let stream = await transport.subscribe(.channel(channel))
                        streams.addTask {
                            do {
                                for try await event in stream {
                                    switch event {
                                    case .live:
                                        StandardStreams.error("live: \(channel)")
                                    case .payload(let payload):
                                        StandardStreams.output(
                                            #"{"channel":\#(JSONString.quoted(channel)),"event":\#(JSONLine.embed(payload.json))}"#)
                                    case .resumed(let gap):
                                        StandardStreams.error("resumed: \(channel) after a gap \(gap)")
                                    }
                                }
                            } catch {
                                failures.withLock { $0 += 1 }
                                StandardStreams.error("error: \(channel): \(error)")
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
}
