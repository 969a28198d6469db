import Foundation
import SubscriberCore

/// One upstream's overlap during a make-before-break transport switch: the old transport's run goes on delivering and
/// records what it delivered; the new run holds what it receives until the cut-over, then delivers it minus what the
/// old one already delivered, and goes on checking its first events against that record for a short while.
///
/// Every decision is taken under one lock shared by both runs, so an event is delivered by one of them or by neither
/// (both decide in order under it), and the cut-over is one step. It exists only during a switch: outside one,
/// delivery takes no lock of it and computes no identity.
///
/// Bounded: at most ``ledgerLimit`` identities recorded (the oldest are forgotten first), at most ``heldLimit``
/// events held (a longer preparation drops the oldest held ones and reports them as lost at the cut-over, over a
/// window from the overlap's beginning: a dropped one can have arrived as early as that).
final class SwitchOverlap: Sendable {
    /// Identities recorded from the old transport, at most.
    static let ledgerLimit = 4096
    /// Events held from the new transport before the cut-over, at most.
    static let heldLimit = 4096

    private enum Stage: Equatable {
        /// The old run delivers and records; the new one holds.
        case overlapping
        /// The new run delivers, dropping what the old one delivered.
        case deduplicating
        /// Over: the new run delivers everything.
        case ended
        /// Given up before the cut-over: the old run goes on delivering, the new one is stopped.
        case abandoned
    }

    private struct State {
        var stage = Stage.overlapping
        var ledger = DeliveredLedger(limit: SwitchOverlap.ledgerLimit)
        var held: [SubscriptionEvent] = []
        var heldDropped = 0
        let encoder = EventIdentity.makeEncoder()
    }

    struct Side: Sendable {
        let dialect: TransportDialect
        let name: String
    }

    let upstream: Upstream
    private let router: EventRouter
    private let events: StreamHub<NotifierConnectionEvent>
    private let old: Side
    private let new: Side
    /// When the overlap began (its making, before the new run can receive anything): no held event arrived earlier.
    private let began: Date
    private let state = Locked(State())

    init(upstream: Upstream, router: EventRouter, events: StreamHub<NotifierConnectionEvent>, old: Side, new: Side) {
        self.upstream = upstream
        self.router = router
        self.events = events
        self.old = old
        self.new = new
        self.began = router.losses.wallClock.now()
    }

    /// An event of the old run: delivered (and its identity recorded) until the cut-over, dropped afterwards.
    func fromOld(_ event: SubscriptionEvent, into batch: DeliveryBatch? = nil) {
        state.withLock { state in
            // An event the old run read just before a given-up switch reopened its delivery is still its own to deliver.
            guard state.stage == .overlapping || state.stage == .abandoned else { return }
            switch event {
            case .payload(let payload):
                guard state.stage == .overlapping else {
                    return router.route(payload, from: upstream, dialect: old.dialect, into: batch)
                }
                let identities = identify(payload, side: old, encoder: state.encoder)
                router.route(payload, from: upstream, dialect: old.dialect, into: batch)
                state.ledger.record(identities)
            case .resumed(let gap): events.yield(.resumed(stream: upstream.rawValue, transport: old.name, gap: gap))
            case .lost(let loss): events.yield(.eventsLost(stream: upstream.rawValue, transport: old.name, loss: loss))
            case .live: break
            }
        }
    }

    /// An event of the new run: held until the cut-over, then delivered unless the old run delivered it. Returns
    /// `false` once the overlap is over: the run then delivers directly.
    func fromNew(_ event: SubscriptionEvent, into batch: DeliveryBatch? = nil) -> Bool {
        state.withLock { state in
            switch state.stage {
            case .overlapping:
                if state.held.count >= Self.heldLimit {
                    state.held.removeFirst()
                    state.heldDropped += 1
                }
                state.held.append(event)
                return true
            case .deduplicating:
                deliverNew(event, &state, batch)
                return state.stage != .ended
            case .ended:
                deliverNew(event, &state, batch)
                return false
            case .abandoned:
                // The new run is being stopped; the old one delivers: one read just before its stop would be a copy.
                return true
            }
        }
    }

    /// The cut-over: the old run stops delivering, and the new one delivers what it held (minus duplicates).
    func cutOver() {
        // The held events wake each observer once, after the lock is released.
        let batch = DeliveryBatch()
        defer { batch.close() }
        state.withLock { state in
            guard case .overlapping = state.stage else { return }
            state.stage = .deduplicating
            let held = state.held
            state.held = []
            if state.heldDropped > 0 {
                router.losses.report(
                    .bufferOverflow, count: state.heldDropped, stream: upstream.rawValue, transport: new.name, since: began)
            }
            for event in held { deliverNew(event, &state, batch) }
            if state.ledger.isEmpty { state.stage = .ended }
        }
    }

    /// The overlap is over (given up, if it never cut over): nothing more is held, recorded or compared.
    func end() {
        state.withLock { state in
            state.stage = state.stage == .overlapping ? .abandoned : .ended
            state.ledger = DeliveredLedger(limit: 0)
            state.held = []
        }
    }

    private func deliverNew(_ event: SubscriptionEvent, _ state: inout State, _ batch: DeliveryBatch?) {
        switch event {
        case .payload(let payload):
            if !state.ledger.isEmpty {
                let identities = identify(payload, side: new, encoder: state.encoder)
                if state.ledger.consume(identities) {
                    if state.ledger.isEmpty { state.stage = .ended }
                    return
                }
            }
            if case .deduplicating = state.stage, state.ledger.isEmpty { state.stage = .ended }
            router.route(payload, from: upstream, dialect: new.dialect, into: batch)
        case .resumed(let gap): events.yield(.resumed(stream: upstream.rawValue, transport: new.name, gap: gap))
        case .lost(let loss): events.yield(.eventsLost(stream: upstream.rawValue, transport: new.name, loss: loss))
        case .live: break
        }
    }

    private func identify(_ payload: RealtimePayload, side: Side, encoder: JSONEncoder) -> [EventIdentity] {
        router.normalisedEvents(of: payload, from: upstream, dialect: side.dialect).map { EventIdentity($0, encoder: encoder) }
    }
}
