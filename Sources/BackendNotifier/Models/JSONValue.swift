// `JSONValue` moved to SubscriberCore so that the local backend uses the same type; re-exported here (the type with all
// its members, which a typealias would not carry under `MemberImportVisibility`) so that code importing only
// `BackendNotifier` names it as before.
@_exported import enum SubscriberCore.JSONValue
