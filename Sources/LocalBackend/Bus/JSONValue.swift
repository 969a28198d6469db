// `JSONValue` is SubscriberCore's, the one the notifier uses too; re-exported here (with its members) because domain
// event payloads are made of it, so code importing only `LocalBackend` can write them.
@_exported import enum SubscriberCore.JSONValue
