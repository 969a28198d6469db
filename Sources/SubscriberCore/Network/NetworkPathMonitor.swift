/// Reports the device's network path, so every transport can react to it: no reconnect attempts while there is no
/// network, an immediate reconnect when it returns, and an immediate probe of every open link when the interface
/// changes (Wi-Fi ↔ cellular).
///
/// Implementations: ``DrivenNetworkPathMonitor`` (the app or a test reports the path; works everywhere) and, on Apple
/// platforms, ``SystemNetworkPathMonitor`` (backed by `NWPathMonitor`). `Composition` gives every transport the
/// platform's monitor.
public protocol NetworkPathMonitor: Sendable {
    /// A new stream of paths for one consumer: it starts with the current path (once one is known) and yields every
    /// change after it. Many consumers may listen at once, each on its own stream; cancelling one ends only that one.
    func paths() -> AsyncStream<NetworkPath>
}
