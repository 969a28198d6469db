import Foundation
import SubscriberCore

/// One upstream run: subscribes on its transport and delivers each event where its ``UpstreamDelivery`` says, on its
/// own task (no hop onto the notifier per event). Only the subscription's confirmation and its end go to the state
/// machine (`report`).
///
/// Batched delivery, explicitly: the pump reads everything its subscription has queued at once (a ``BatchReader`` of
/// this package's transports), delivers it with one ``DeliveryBatch``, and flushes the batch when it has delivered
/// the lot, so each observer is woken once per batch. A transport that cannot be read in batches is read an event at
/// a time, each event a batch of its own.
struct UpstreamPump: Sendable {
    let id: NotifierStateMachine.RunID
    let transport: any RealtimeTransport
    let request: SubscriptionRequest
    let delivery: UpstreamDelivery
    let router: EventRouter
    let events: StreamHub<NotifierConnectionEvent>

    func run(report: @escaping @Sendable (NotifierStateMachine.Event) async -> Void) async {
        let batch = DeliveryBatch()
        defer { batch.close() }
        let source = (upstream: id.upstream, dialect: transport.dialect, name: transport.name)
        do {
            if let batching = transport as? any BatchSubscribing {
                let reader = await batching.subscribeInBatches(request)
                var events: [SubscriptionEvent] = []
                while try await reader.next(into: &events) {
                    // Moved out one by one, not copied: no retain and release per event.
                    events.reverseByMoving()
                    while let event = events.popLast() { await handle(event, source, batch, report) }
                    batch.flush()
                }
            } else {
                for try await event in await transport.subscribe(request) {
                    await handle(event, source, batch, report)
                    batch.flush()
                }
            }
            await report(.upstreamEnded(id, nil))
        } catch {
            await report(.upstreamEnded(id, error as? RealtimeError ?? .network("\(error)")))
        }
    }

    private func handle(
        _ event: SubscriptionEvent, _ source: (upstream: Upstream, dialect: TransportDialect, name: String), _ batch: DeliveryBatch,
        _ report: @Sendable (NotifierStateMachine.Event) async -> Void
    ) async {
        if case .live = event {
            batch.flush()
            await report(.upstreamLive(id))
            return
        }
        // The machine forgets the outage this run owed; the window itself goes to the app below.
        if case .resumed = event { await report(.upstreamResumed(id)) }
        switch delivery.mode {
        case .open:
            switch event {
            case .payload(let payload): router.route(payload, from: source.upstream, dialect: source.dialect, into: batch)
            case .resumed(let gap): events.yield(.resumed(stream: source.upstream.rawValue, transport: source.name, gap: gap))
            case .lost(let loss): events.yield(.eventsLost(stream: source.upstream.rawValue, transport: source.name, loss: loss))
            case .live: break
            }
        case .closed:
            break
        case .old(let overlap):
            overlap.fromOld(event, into: batch)
        case .new(let overlap):
            if !overlap.fromNew(event, into: batch) { delivery.reopen(after: overlap) }
        }
    }
}
