import Composition
import Foundation
import RealtimePreflight

/// Everything `drill` found: preflight, parity, the rollback, and what it could and could not judge with its trigger.
public struct DrillReport: Sendable, Codable, Equatable {
    /// `admin`, `command` or `none`.
    public var trigger: String
    /// Who signed in.
    public var identity: DrillIdentity
    /// Preflight on both transports (the drill stops when it fails).
    public var preflight: [PreflightReport]
    /// Trigger `admin`: the exact parity check.
    public var parity: ParityReport?
    /// Triggers `command` and `none`: the shadow parity check.
    public var shadowParity: ShadowParityReport?
    /// The rollback drill.
    public var rollback: RollbackReport?
    /// Trigger `command`: how its runs went.
    public var command: TriggerStatistics?
    /// What was judged and what could not be, with this trigger.
    public var judgements: [DrillJudgement] = []
    /// Whether everything judged passed and something substantive (parity or losses) was judged.
    public var passed = false

    /// A report of `trigger` for `identity` after preflight; ``judge()`` it once the checks ran.
    public init(trigger: String, identity: DrillIdentity, preflight: [PreflightReport]) {
        self.trigger = trigger
        self.identity = identity
        self.preflight = preflight
        judge()
    }

    /// The demo's report: both `admin` checks on the sample user, judged.
    public init(parity: ParityReport, rollback: RollbackReport) {
        self.init(trigger: "admin", identity: .sample, preflight: [])
        self.parity = parity
        self.rollback = rollback
        judge()
    }

    /// Derives ``judgements`` and ``passed`` from the results.
    public mutating func judge() {
        var judgements: [DrillJudgement] = []
        if !preflight.isEmpty {
            let failed = preflight.filter { !$0.passed }.map(\.transport)
            judgements.append(
                .verdict(
                    "preflight", failed.isEmpty,
                    failed.isEmpty ? "both transports check out" : "failed on \(failed.joined(separator: ", "))"))
        }
        if let parity {
            let failing = parity.streams.filter { !($0.identical && $0.appsync == $0.published && $0.graphql == $0.published) }.map(
                \.stream)
            judgements.append(
                .verdict(
                    "parity", parity.passed,
                    failing.isEmpty
                        ? "every published event delivered on every stream of both APIs, identical on both transports"
                        : "streams differ: \(failing.joined(separator: ", "))"))
        }
        if let shadow = shadowParity {
            let compared = shadow.matched + shadow.onlyAppSync + shadow.onlyGraphQL + shadow.different + shadow.insideGaps
            judgements.append(
                compared == 0
                    ? .notJudged("parity", "no event arrived on either transport in the parity phase: nothing to compare")
                    : .verdict(
                        "parity", shadow.passed,
                        "matched \(shadow.matched), onlyAppSync \(shadow.onlyAppSync), onlyGraphQL \(shadow.onlyGraphQL), different \(shadow.different), inside reported gaps \(shadow.insideGaps)"
                    ))
        }
        if let rollback { judgements += Self.rollbackJudgements(rollback) }
        if let command {
            let arrived = (shadowParity?.allEvents.count ?? 0) + (rollback?.expected ?? 0)
            let ok = command.failures == 0 && (command.runs == 0 || arrived > 0)
            var detail = "ran \(command.runs) times, \(command.failures) failed"
            if let first = command.firstFailure { detail += " (first: \(first))" }
            if command.runs > 0 && arrived == 0 { detail += "; no event reached \(identity.user)" }
            judgements.append(.verdict("command", ok, detail))
        }
        if trigger == "admin" && (parity != nil || rollback != nil) {
            if identity.organization == nil {
                judgements.append(.notJudged("organizationEvents", "no organization (--org): organization events were not published"))
            }
            if identity.organization == nil || identity.deviceGroup == nil {
                judgements.append(
                    .notJudged(
                        "deviceEvents", "no device group (--device-group) or organization: device and archive events were not published"))
            }
        }
        switch trigger {
        case "command":
            judgements.append(
                .notJudged(
                    "allLosses",
                    "the drill does not know which events the command caused: losses are counted only among events a reference notifier delivered"
                ))
        case "none":
            judgements.append(
                .notJudged(
                    "allLosses",
                    "with --trigger none the drill cannot count losses it did not cause: only events a reference notifier saw are judged"))
        default: break
        }
        if let rollback, rollback.latencyP50Milliseconds == nil {
            judgements.append(
                .notJudged("latency", "publish-to-consumer latency needs the publish time, which only the admin trigger knows"))
        }
        self.judgements = judgements
        let substantive = judgements.contains { ($0.name == "parity" || $0.name == "losses") && $0.judged }
        passed = substantive && judgements.allSatisfy { $0.passed != false }
    }

    private static func rollbackJudgements(_ rollback: RollbackReport) -> [DrillJudgement] {
        guard rollback.switches.count == 2 else {
            return [.verdict("losses", false, "the rollback did not complete both switches (\(rollback.switches.count) of 2)")]
        }
        guard rollback.expected > 0 else {
            return [
                .notJudged("losses", "no event arrived during the rollback: the switches were not exercised under traffic"),
                .notJudged("duplicates", "no event arrived during the rollback"),
            ]
        }
        let outside = rollback.streams.reduce(0) { $0 + $1.missingOutsideWindows }
        let missing = rollback.streams.reduce(0) { $0 + $1.missing }
        let duplicated = rollback.streams.reduce(0) { $0 + $1.duplicated }
        let basis = rollback.basis == "published" ? "published by the drill" : "seen by a reference notifier"
        return [
            .verdict(
                "losses", outside == 0,
                "\(rollback.expected) events \(basis); \(missing) missing, \(outside) of them outside every reported window"),
            .verdict("duplicates", duplicated == 0, "\(duplicated) delivered twice"),
        ]
    }

    /// A readable report.
    public func rendered() -> String {
        let isDrill = trigger != "admin" || !preflight.isEmpty
        var lines: [String] = isDrill ? ["Drill as \(identity.user) (trigger \(trigger))", ""] : []
        if let parity {
            lines += ["Parity (same events, AppSync Events vs GraphQL, both APIs)", ""]
            lines.append(Self.row(["stream", "published", "appsync", "graphql", "identical"]))
            for stream in parity.streams {
                lines.append(
                    Self.row([
                        stream.stream, "\(stream.published)", "\(stream.appsync)", "\(stream.graphql)", stream.identical ? "yes" : "NO",
                    ]))
                if let difference = stream.difference { lines.append("    \(difference)") }
            }
            lines.append("")
        }
        if let shadowParity { lines += [shadowParity.rendered(), ""] }
        if let rollback {
            lines += ["Rollback drill (AppSync Events -> GraphQL -> AppSync Events while events flow)", ""]
            let expected = rollback.basis == "published" ? "published" : "observed"
            lines.append(Self.row(["stream", expected, "received", "missing", "lost outside", "duplicated"]))
            for stream in rollback.streams {
                lines.append(
                    Self.row([
                        stream.stream, "\(stream.published)", "\(stream.received)", "\(stream.missing)", "\(stream.missingOutsideWindows)",
                        "\(stream.duplicated)",
                    ]))
            }
            lines.append("")
            for item in rollback.switches { lines.append(item.summary) }
            if let p50 = rollback.latencyP50Milliseconds, let p99 = rollback.latencyP99Milliseconds {
                lines.append(String(format: "latency p50 %.1f ms, p99 %.1f ms", p50, p99))
            }
            lines.append("")
        }
        if isDrill {
            lines.append("What was judged:")
            for judgement in judgements { lines.append("  " + judgement.summary) }
            lines.append("")
        }
        lines.append(passed ? "PASSED: everything judged matched" : "FAILED: see the rows above")
        return lines.joined(separator: "\n")
    }

    static func row(_ cells: [String]) -> String {
        cells.enumerated().map { index, cell in
            index == 0
                ? cell.padding(toLength: 16, withPad: " ", startingAt: 0) : String(repeating: " ", count: max(1, 13 - cell.count)) + cell
        }.joined()
    }
}
