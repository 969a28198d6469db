import Foundation

/// What the demo's store phase saw: device changes published while the connection was suspended (none could arrive
/// live), the gap the notifier reported on foreground, and the store healed by its backfill.
public struct StoreHealingReport: Sendable, Encodable {
    /// Device changes published while suspended.
    public var publishedInGap: Int
    /// The reported gap, in seconds (0 when none was reported).
    public var gapSeconds: Double
    /// Devices whose current value came from the backfill once the store was current.
    public var healedFromBackfill: Int
    /// Whether the store, once current and with nothing stale, equalled `GET /vortex/state`.
    public var equalsBackend: Bool

    /// Every change of the gap reached the store through the backfill, and the store equals the backend.
    public var passed: Bool { equalsBackend && healedFromBackfill >= publishedInGap && gapSeconds > 0 }

    /// One line for the demo.
    public func rendered() -> String {
        "store: \(publishedInGap) device changes published while suspended, gap \(String(format: "%.2f", gapSeconds)) s reported; "
            + "\(healedFromBackfill) devices healed from the backfill; equals GET /vortex/state: \(equalsBackend ? "yes" : "no") — "
            + (passed ? "PASSED" : "FAILED")
    }
}
