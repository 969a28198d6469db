import ArgumentParser
import Composition
import Foundation

/// `vortex-realtime settings`: the configuration reference generated from `RealtimeSettingsTable`.
struct SettingsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "settings",
        abstract: "Print the configuration reference (Markdown), or rewrite it in a document between its marker comments.")

    @Option(help: "Rewrite the reference in this Markdown file (between <!-- settings-table:begin --> and -end -->).")
    var write: String?

    func run() throws {
        guard let write else {
            for line in RealtimeSettingsTable.markdownReference().split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
                StandardStreams.output(String(line))
            }
            return
        }
        let url = URL(fileURLWithPath: write)
        let document: String
        do { document = try String(contentsOf: url, encoding: .utf8) } catch {
            throw CLIFailure.badArgument("--write", "cannot read \(write): \(error.localizedDescription)")
        }
        guard let updated = RealtimeSettingsTable.updatingReference(in: document) else {
            throw CLIFailure.badArgument(
                "--write", "\(write) lacks \(RealtimeSettingsTable.referenceBegin) … \(RealtimeSettingsTable.referenceEnd)")
        }
        guard updated != document else { return }
        do { try updated.write(to: url, atomically: true, encoding: .utf8) } catch {
            throw CLIFailure.runtime("cannot write \(write): \(error.localizedDescription)")
        }
    }
}
