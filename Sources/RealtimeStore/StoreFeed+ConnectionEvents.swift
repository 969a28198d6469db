import BackendNotifier
import Foundation
import SubscriberCore

extension StoreFeed {
    /// A window reported by the notifier opens a backfill for the kinds of its stream.
    func connectionEvent(_ event: NotifierConnectionEvent, generation: Int) {
        let now = wallClock.now()
        let jobs = state.withLock { state -> [Job] in
            guard state.generation == generation else { return [] }
            var jobs: [Job] = []
            /// `releasing`: the stream is live again, so its kinds' calls are no longer held.
            func open(_ stream: String, _ window: GapWindow, releasing: Bool) {
                if releasing { state.heldStreams[stream] = nil }
                for kind in Self.kinds(of: stream) { jobs += handle(kind, .windowOpened(window, releasing: releasing), &state) }
            }
            switch event {
            case .resumed(let stream, _, let gap):
                open(
                    stream,
                    GapWindow(start: min(gap.start, state.interruptedStreams.removeValue(forKey: stream) ?? gap.start), end: gap.end),
                    releasing: true)
            case .live(let stream, _):
                if let since = state.interruptedStreams.removeValue(forKey: stream) {
                    open(stream, GapWindow(start: since, end: now), releasing: true)
                }
            case .eventsLost(let stream, _, let loss):
                open(stream, loss.window, releasing: state.heldStreams[stream] == nil)
            case .transportSwitched(_, _, let gap, _):
                // The new runs went live inside the switch, and report no `live` of their own: a stream's window starts
                // where it was last known live (since a load, or since it stopped), or where the switch's gap starts.
                for upstream in NotifierUpstream.allCases {
                    let stream = upstream.rawValue
                    let since = state.interruptedStreams[stream]
                    let window = GapWindow(start: min(gap.start, since ?? gap.start), end: gap.end)
                    switch state.heldStreams[stream] {
                    case nil:
                        // Restarted by the cut-over: live now.
                        state.interruptedStreams[stream] = nil
                        if window.duration > 0 { open(stream, window, releasing: true) }
                    case .failed:
                        // The cut-over restarted it too; if it did not (in the background), its later `live` opens
                        // what follows the switch.
                        state.interruptedStreams[stream] = gap.end
                        open(stream, window, releasing: true)
                    case .stopped:
                        // No run exists: the window only widens what is missing; the stream's own `live` releases it.
                        if window.duration > 0 { open(stream, window, releasing: false) }
                    }
                }
            case .sessionExpired, .signedOut:
                for upstream in NotifierUpstream.allCases {
                    // The earliest instant a stream may have missed events from (an earlier one is kept).
                    let since = state.interruptedStreams[upstream.rawValue] ?? now
                    state.interruptedStreams[upstream.rawValue] = since
                    state.heldStreams[upstream.rawValue] = .stopped
                    for kind in Self.kinds(of: upstream.rawValue) { jobs += handle(kind, .interrupted(since: since), &state) }
                }
            case .streamFailed(let stream, _, _):
                // No more events come for it until the app restarts it (`update`): what it holds goes stale now.
                let since = state.interruptedStreams[stream] ?? now
                state.interruptedStreams[stream] = since
                if state.heldStreams[stream] == nil { state.heldStreams[stream] = .failed }
                for kind in Self.kinds(of: stream) { jobs += handle(kind, .interrupted(since: since), &state) }
            case .networkError, .suspended:
                break
            }
            return jobs
        }
        start(jobs)
    }

    /// The store's kinds carried by the notifier's stream named `stream` (every kind for `nil`).
    static func kinds(of stream: String?) -> [VortexEventKind] {
        guard let stream else { return kinds }
        switch NotifierUpstream(rawValue: stream) {
        case .device: return [.devicePresence, .deviceRecording, .deviceFirmware]
        case .organization: return [.licensePhase, .plan, .aiSettings]
        case .role: return [.roleChanged]
        case .revoke: return [.tokenRevoked]
        case .archive: return [.archiveState]
        case nil: return kinds
        }
    }
}
