/// Where the drill's events come from.
public enum DrillTrigger: Sendable {
    /// Domain events the drill publishes itself through a backend with an admin endpoint (the embedded backend, or
    /// `vortex-realtime serve --admin`): every event is known, so losses, duplicates and latency are judged exactly.
    case admin(any DrillBackend)
    /// A command the team provides that causes one real backend event per run (``TriggerCommand``).
    case command(TriggerCommand)
    /// Passive: natural traffic only, for a duration.
    case none

    /// `admin`, `command` or `none`.
    public var name: String {
        switch self {
        case .admin: "admin"
        case .command: "command"
        case .none: "none"
        }
    }
}
