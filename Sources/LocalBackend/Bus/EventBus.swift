import Foundation
import Logging
import SubscriberCore
import VortexVocabulary

/// The backend's event bus, shared by both protocols.
///
/// ``publish(_:on:)`` fans one domain event out to the AppSync Events user channels of exactly the users allowed to see
/// it (``recipients(of:)``), and hands it to every ``domainEvents()`` stream, where the legacy GraphQL side does its
/// own fan-out and permission filtering with the same ``directory``. Given only one protocol, it publishes there alone
/// (a one-sided event, which `vortex-realtime parity` must report as a mismatch).
public final class EventBus: Sendable {
    /// The users, organizations, roles and device groups used for permission filtering.
    public let directory: UserDirectory
    let hub: ChannelHub
    /// The current state per entity the published events leave (`GET /vortex/state`).
    let ledger = EntityStateLedger()
    private let logger: Logger
    private let observers = Locked(Observers())

    private struct Observers {
        var nextID = 0
        var continuations: [Int: Observer] = [:]
    }

    /// One ``domainEvents()`` stream; the legacy GraphQL side's streams see only events published on GraphQL.
    private struct Observer {
        let continuation: AsyncStream<DomainEvent>.Continuation
        let graphQLOnly: Bool
    }

    init(directory: UserDirectory, hub: ChannelHub, logger: Logger) {
        self.directory = directory
        self.hub = hub
        self.logger = logger
    }

    deinit {
        for observer in observers.withLock({ $0.continuations.values }) { observer.continuation.finish() }
    }

    /// The ids (sorted) of the users allowed to see `event`:
    /// - device and archive kinds: users of `orgId` whose device groups contain `deviceGroupId`, and the
    ///   organization's admins (role ``DirectoryUser/adminRole``), who see every group;
    /// - organization kinds: every user of `orgId`;
    /// - `roleChanged`, `tokenRevoked`: `userId` alone, whether or not the directory lists them (the event is about
    ///   them; their token may be revoked precisely because they left the directory).
    public func recipients(of event: DomainEvent) -> [String] {
        switch event.kind.audience {
        case .deviceGroup:
            guard let orgId = event.orgId, let group = event.deviceGroupId else { return [] }
            return directory.users.filter { $0.canSee(deviceGroup: group, in: orgId) }.map(\.id).sorted()
        case .organization:
            guard let orgId = event.orgId else { return [] }
            return directory.users(inOrganization: orgId).map(\.id).sorted()
        case .user:
            return event.userId.map { [$0] } ?? []
        }
    }

    /// Fans `event` out on `protocols` (default: both) and returns what was delivered. The event is stamped with the
    /// current time when it has no `timestamp`. An invalid event (see ``DomainEvent/validate()``) is logged and
    /// delivered to nobody. Without `.appSyncEvents` no AppSync channel gets it (the summary's `channels` is empty and
    /// `frames` 0); without `.graphQL` no GraphQL subscription does. ``domainEvents()`` sees it either way.
    @discardableResult
    public func publish(
        _ event: DomainEvent, on protocols: Set<ConnectionRegistry.Kind> = [.appSyncEvents, .graphQL]
    ) async -> FanOutSummary {
        var event = event
        let timestamp = event.timestamp ?? DomainEvent.timestampText(Date())
        event.timestamp = timestamp
        let json = event.publishedJSON(timestamp: timestamp)
        do {
            try event.validate()
        } catch {
            logger.warning("domain event refused", metadata: ["reason": "\(error)"])
            return FanOutSummary(eventType: event.kind.eventType, deliveredTo: [], channels: [], frames: 0, event: json)
        }
        ledger.record(event, json: json)
        for observer in observers.withLock({ Array($0.continuations.values) }) where protocols.contains(.graphQL) || !observer.graphQLOnly {
            observer.continuation.yield(event)
        }
        let users = recipients(of: event)
        var channels: [String] = []
        var frames = 0
        for user in users where protocols.contains(.appSyncEvents) {
            let channel = event.kind.channel(userId: user)
            channels.append(channel)
            frames += await hub.publish(channel: channel, events: [json])
        }
        logger.debug(
            "domain event fanned out",
            metadata: ["eventType": "\(event.kind.eventType)", "users": "\(users.count)", "frames": "\(frames)"])
        return FanOutSummary(eventType: event.kind.eventType, deliveredTo: users, channels: channels, frames: frames, event: json)
    }

    /// The state `userId` of `organizationId` may see, as the events published so far leave it (see
    /// ``EntityStateLedger``): one JSON object, what `GET /vortex/state` answers.
    public func state(organizationId: String, userId: String) -> String {
        ledger.state(organizationId: organizationId, userId: userId, directory: directory)
    }

    /// Publishes raw events to one AppSync channel as a trusted backend (no authorization, no validation beyond the
    /// caller's); returns the number of `data` messages queued.
    @discardableResult
    public func publish(channel: String, events: [String]) async -> Int {
        await hub.publish(channel: channel, events: events)
    }

    /// A new stream of every domain event published from now on (stamped with its timestamp), on either protocol.
    /// Many observers may listen at once; each buffers up to 1024 events if it falls behind.
    public func domainEvents() -> AsyncStream<DomainEvent> {
        observe(graphQLOnly: false)
    }

    /// The legacy GraphQL side's source: like ``domainEvents()``, without the events published on AppSync alone.
    func graphQLDomainEvents() -> AsyncStream<DomainEvent> {
        observe(graphQLOnly: true)
    }

    private func observe(graphQLOnly: Bool) -> AsyncStream<DomainEvent> {
        let (stream, continuation) = AsyncStream<DomainEvent>.makeStream(bufferingPolicy: .bufferingNewest(1024))
        let id = observers.withLock { state in
            let id = state.nextID
            state.nextID += 1
            state.continuations[id] = Observer(continuation: continuation, graphQLOnly: graphQLOnly)
            return id
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.observers.withLock { $0.continuations.removeValue(forKey: id) }
        }
        return stream
    }

    /// Ends every ``domainEvents()`` stream (the server is stopping).
    func finish() {
        let continuations = observers.withLock { state in
            defer { state.continuations.removeAll() }
            return Array(state.continuations.values)
        }
        for observer in continuations { observer.continuation.finish() }
    }
}
