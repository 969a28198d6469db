/// Why ``LocalBackendServer/start()`` failed.
public enum LocalBackendError: Error, Sendable, Equatable, CustomStringConvertible {
    /// ``LocalBackendServer/start()`` is already in progress.
    case alreadyStarting
    /// The server has been stopped (or stopped before it was listening); create a new one.
    case stopped
    /// The configuration cannot work, for example a JWT secret shorter than 32 bytes.
    case invalidConfiguration(String)

    /// A readable description.
    public var description: String {
        switch self {
        case .alreadyStarting: "the local backend is already starting"
        case .stopped: "the local backend has stopped"
        case .invalidConfiguration(let reason): "invalid local backend configuration: \(reason)"
        }
    }
}
