import SubscriberCore

extension TransportFactory {
    /// The network path monitor the composition root uses unless told otherwise: a new `SystemNetworkPathMonitor`
    /// (`NWPathMonitor`) on Apple platforms; `nil` elsewhere (no system monitor there: pass a
    /// `DrivenNetworkPathMonitor` and report the path yourself, if the platform tells you).
    public static func platformPathMonitor() -> (any NetworkPathMonitor)? {
        #if canImport(Network)
        SystemNetworkPathMonitor()
        #else
        nil
        #endif
    }
}
