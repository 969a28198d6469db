import Composition
import Foundation

extension RealtimeConfiguration {
    /// The defaults, the `--config` file over them, then the VORTEX_REALTIME_* variables over both, as the app reads
    /// them. A bad file fails naming `--config`; a bad variable names `VORTEX_REALTIME_*`.
    static func loadForCommandLine(config: String?) throws -> RealtimeConfiguration {
        var configuration = RealtimeConfiguration()
        if let config {
            do { configuration = try configuration.applyingFile(config) } catch { throw CLIFailure.badArgument("--config", "\(error)") }
        }
        do { configuration = try configuration.applyingEnvironment(ProcessInfo.processInfo.environment) } catch {
            throw CLIFailure.badArgument("VORTEX_REALTIME_*", "\(error)")
        }
        return configuration
    }
}
