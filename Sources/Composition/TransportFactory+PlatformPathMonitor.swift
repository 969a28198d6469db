import SubscriberCore

extension TransportFactory {
    /// The network path monitor the composition root uses unless told otherwise: a new `SystemNetworkPathMonitor`
    /// (`NWPathMonitor`) on iOS, macOS and tvOS; `nil` elsewhere (no system monitor there: pass a
    /// `DrivenNetworkPathMonitor` and report the path yourself, if the platform tells you). On watchOS an
    /// `NWPathMonitor` stays unsatisfied for an ordinary app (Apple TN3135), so none is used there: the connector's
    /// `unsupportedPlatform` error is reported instead of a wait for a path that cannot come.
    public static func platformPathMonitor() -> (any NetworkPathMonitor)? {
        #if canImport(Network) && !os(watchOS)
        SystemNetworkPathMonitor()
        #else
        nil
        #endif
    }
}
