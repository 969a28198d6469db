/// One thing the drill judged, or says it could not judge with the chosen trigger, and why.
public struct DrillJudgement: Sendable, Codable, Equatable {
    /// What: `preflight`, `parity`, `losses`, `duplicates`, `command`, `allLosses`, `latency`.
    public var name: String
    /// Whether the drill could judge it with this trigger and this traffic.
    public var judged: Bool
    /// The verdict; `nil` when not judged.
    public var passed: Bool?
    /// What was found, or why it could not be judged.
    public var detail: String

    /// A verdict.
    public static func verdict(_ name: String, _ passed: Bool, _ detail: String) -> DrillJudgement {
        DrillJudgement(name: name, judged: true, passed: passed, detail: detail)
    }

    /// Not judged, and why.
    public static func notJudged(_ name: String, _ why: String) -> DrillJudgement {
        DrillJudgement(name: name, judged: false, passed: nil, detail: why)
    }

    /// One line: `ok   parity: …`, `FAIL losses: …`, `--   latency: not judged: …`.
    public var summary: String {
        switch passed {
        case true?: "ok   \(name): \(detail)"
        case false?: "FAIL \(name): \(detail)"
        case nil: "--   \(name): not judged: \(detail)"
        }
    }
}
