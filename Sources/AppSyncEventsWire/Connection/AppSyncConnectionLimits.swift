/// The service's limits for one WebSocket connection, which the client enforces before subscribing and the local
/// backend enforces as the service does.
package enum AppSyncConnectionLimits {
    /// The most subscriptions the service allows on one connection.
    package static let maxSubscriptions = 200
}
