import Foundation
import SubscriberCore

/// One upstream run: subscribes on its transport and delivers each event where its ``UpstreamDelivery`` says, on its
/// own task (no hop onto the notifier per event). Only the subscription's confirmation and its end go to the state
/// machine (`report`).
struct UpstreamPump: Sendable {
    let id: NotifierStateMachine.RunID
    let transport: any RealtimeTransport
    let request: SubscriptionRequest
    let delivery: UpstreamDelivery
    let router: EventRouter
    let events: StreamHub<NotifierConnectionEvent>

    func run(report: @escaping @Sendable (NotifierStateMachine.Event) async -> Void) async {
        let stream = await transport.subscribe(request)
        let upstream = id.upstream
        let dialect = transport.dialect
        let name = transport.name
        // Batched delivery: the observers this pump delivers to are woken once each time it has drained its
        // transport stream (the stream's buffer flushes the batch then), not once per value.
        let batch = DeliveryBatch()
        defer { batch.close() }
        await DeliveryBatch.$current.withValue(batch) {
            do {
                var flushedByUpstream = false
                for try await event in stream {
                    // A transport stream that is not a StreamBuffer cannot flush the batch: do it per value.
                    defer {
                        if !flushedByUpstream {
                            flushedByUpstream = batch.isFlushedByUpstream
                            if !flushedByUpstream { batch.flush() }
                        }
                    }
                    if case .live = event {
                        await report(.upstreamLive(id))
                        continue
                    }
                    switch delivery.mode {
                    case .open:
                        switch event {
                        case .payload(let payload): router.route(payload, from: upstream, dialect: dialect)
                        case .resumed(let gap): events.yield(.resumed(stream: upstream.rawValue, transport: name, gap: gap))
                        case .lost(let loss): events.yield(.eventsLost(stream: upstream.rawValue, transport: name, loss: loss))
                        case .live: break
                        }
                    case .closed:
                        break
                    case .old(let overlap):
                        overlap.fromOld(event)
                    case .new(let overlap):
                        if !overlap.fromNew(event) { delivery.reopen(after: overlap) }
                    }
                }
                await report(.upstreamEnded(id, nil))
            } catch {
                await report(.upstreamEnded(id, error as? RealtimeError ?? .network("\(error)")))
            }
        }
    }
}
