import ArgumentParser
import Foundation
import NIOCore
import NIOPosix

/// The `vortex-realtime` command: tools around the VortexRealtime transports.
@main
struct VortexRealtime: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vortex-realtime",
        abstract: "Subscribe, publish and run the local backend for Vortex real-time events.",
        subcommands: [
            DemoCommand.self, ServeCommand.self, TokenCommand.self, TailCommand.self, PublishCommand.self, WatchCommand.self,
            DrillCommand.self, ParityCommand.self, PreflightCommand.self, SettingsCommand.self,
        ],
        defaultSubcommand: DemoCommand.self
    )

    /// Runs the command, mapping failures to the documented exit statuses: 0 success (and --help),
    /// 1 runtime failure, 2 bad arguments (one line on stderr naming the argument).
    static func main() async {
        StandardStreams.prepare()
        do {
            var command = try parseAsRoot()
            if command is ServeCommand {
                // The server alone: its request handlers and writers then run on the event loops that do its I/O,
                // instead of waking a thread of Swift's own pool for each hand-off (several per event).
                NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
            }
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let exit as ExitCode {
            Foundation.exit(exit.rawValue)
        } catch let failure as CLIFailure {
            StandardStreams.error("error: \(failure.message)")
            Foundation.exit(failure.exitCode)
        } catch {
            let code = exitCode(for: error)
            if code == .success {
                StandardStreams.output(fullMessage(for: error))
                Foundation.exit(0)
            }
            let message = self.message(for: error).split(separator: "\n").first.map(String.init) ?? "\(error)"
            StandardStreams.error("error: \(message)")
            Foundation.exit(2)
        }
    }
}
