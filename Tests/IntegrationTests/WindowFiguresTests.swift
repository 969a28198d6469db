import BackendNotifier
import Foundation
import RealtimeDrill
import SubscriberCore
import Testing

/// Issue 20 item 3 (part): every line about a switch or a gap takes its window from the notifier's event, so the lines
/// about one switch agree (the demo once said 2034 ms in one place and 4033 ms in another for the same switch).
@Suite("One source for the window figures", .serialized, .timeLimit(.minutes(3)))
struct WindowFiguresTests {
    /// Every `window N ms` figure on the lines about the switch `from -> to`.
    static func figures(_ lines: [String], _ from: String, _ to: String) -> [Int] {
        lines.filter { $0.contains("switch \(from) -> \(to)") }.compactMap { line in
            guard let range = line.range(of: #"window (\d+) ms"#, options: .regularExpression) else { return nil }
            return Int(line[range].dropFirst("window ".count).dropLast(" ms".count))
        }
    }

    @Test("the rollback's progress lines, its report and its JSON state the same window for each switch, the notifier's")
    func rollbackLinesAgree() async throws {
        let backend = try await EmbeddedDrillBackend.start()
        var runner = DrillRunner(backend: backend)
        let progress = Locked<[String]>([])
        runner.onProgress = { line in progress.withLock { $0.append(line) } }
        let rollback = try await runner.runRollback(events: 30, interval: .milliseconds(5))
        await backend.shutdown()
        let report = DrillReport(parity: ParityReport(streams: []), rollback: rollback)
        let rendered = report.rendered().split(separator: "\n").map(String.init)
        #expect(rollback.switches.count == 2)
        for item in rollback.switches {
            let said = Self.figures(progress.withLock { $0 }, item.from, item.to) + Self.figures(rendered, item.from, item.to)
            #expect(said.count == 2, "\(progress.withLock { $0 }) / \(rendered)")
            #expect(Set(said) == [item.windowMilliseconds], "the lines disagree about \(item.from) -> \(item.to): \(said)")
            // The window is read back from the millisecond stamps, so its length may be a millisecond off.
            #expect(abs(item.windowMilliseconds - WindowFigure.milliseconds(item.window)) <= 1)
            let json = try #require(
                try JSONSerialization.jsonObject(with: JSONEncoder().encode(item)) as? [String: Any])
            #expect(json["windowMilliseconds"] as? Int == item.windowMilliseconds)
            #expect(json["milliseconds"] == nil, "no second figure (the switch call's duration) beside the window")
        }
    }

    @Test("a gap line states the notifier's window")
    func gapLine() {
        let start = Date(timeIntervalSince1970: 1_750_000_000)
        let window = GapWindow(start: start, end: start.addingTimeInterval(2.0344))
        let gap = ReportedGap(NotifierConnectionEvent.resumed(stream: "device", transport: "graphql", gap: window))
        #expect(gap?.milliseconds == 2034)
        #expect(gap?.summary == "graphql resumed device: 2034 ms (2025-06-15T15:06:40.000Z ... 2025-06-15T15:06:42.034Z)")
        let switched = RollbackReport.Switch(from: "appsync", to: "graphql", window: window)
        #expect(switched.summary == "switch appsync -> graphql: window 2034 ms (2025-06-15T15:06:40.000Z ... 2025-06-15T15:06:42.034Z)")
    }
}
