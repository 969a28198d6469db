import Foundation
import SubscriberCore

extension AppSyncEventsTransport {
    /// Sends a `publish` message on the primary link and waits for `publish_success` or an error.
    func publishOverWebSocket(channel: String, events: [String]) async throws -> PublishResult {
        let generation = try await connectedLink()
        guard let link = links[generation], link.end == nil else { throw RealtimeError.network("connection lost before publishing") }
        let id = makeID()
        let body = AppSyncOutboundMessage.publishBody(channel: channel, events: events)
        let message = AppSyncOutboundMessage.publish(
            id: id, channel: channel, events: events, authorization: link.authorizer.authorization(body: body))
        // Registered before sending, so a fast reply finds its waiter.
        pendingPublishes[id] = AppSyncPendingPublish(generation: generation)
        let timeout = configuration.publishTimeout
        let timer = Task { [weak self, clock] in
            do { try await clock.sleep(for: timeout, tolerance: nil) } catch { return }
            await self?.completePublish(id, .failure(RealtimeError.network("no publish_success within \(timeout)")))
        }
        defer { timer.cancel() }
        do {
            try await link.connection.send(.text(message))
        } catch {
            completePublish(id, .failure(RealtimeError.network("publish not sent: \(error)")))
        }
        let result: PublishResult = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard var pending = pendingPublishes[id] else {
                    return continuation.resume(throwing: RealtimeError.disconnected)
                }
                if let outcome = pending.outcome {
                    pendingPublishes[id] = nil
                    return continuation.resume(with: outcome)
                }
                pending.continuation = continuation
                pendingPublishes[id] = pending
            }
        } onCancel: {
            Task { await self.completePublish(id, .failure(CancellationError())) }
        }
        await closeIfIdle()
        return result
    }

    /// Resolves a pending publish once; later outcomes for the same id are ignored.
    func completePublish(_ id: String, _ outcome: Result<PublishResult, any Error>) {
        guard var pending = pendingPublishes[id], pending.outcome == nil else { return }
        if let continuation = pending.continuation {
            pendingPublishes[id] = nil
            continuation.resume(with: outcome)
        } else {
            pending.outcome = outcome
            pendingPublishes[id] = pending
        }
    }

    func failPublishes(on generation: Int? = nil, with error: any Error) {
        let affected = pendingPublishes.filter { generation == nil || $0.value.generation == generation }.map(\.key)
        for id in affected { completePublish(id, .failure(error)) }
    }
}
