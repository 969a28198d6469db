import SubscriberCore

/// The legacy device-state subscription, with the notifier's selection (every field of `subscribeDeviceState`).
enum DeviceStateOperation {
    static let fields = "mac derivant online recording fwUpdateState thingName deviceGroupID orgId siteId eventType timestamp"
    static let query = "subscription DeviceState($orgId: String!) { subscribeDeviceState(orgId: $orgId) { \(fields) } }"

    static func operation(organizationId: String) -> GraphQLOperation {
        GraphQLOperation(query: query, operationName: "DeviceState", variablesJSON: #"{"orgId":"\#(organizationId)"}"#)
    }
}
