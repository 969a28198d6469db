import BackendNotifier
import Foundation
import SubscriberCore

/// What a backfill was asked for, and what it answers next.
final class BackfillScript: Sendable {
    private let state = Locked<(calls: [Date], answers: [Result<[DevicePresenceOutput], BackfillScriptError>])>(([], []))

    func answer(_ result: Result<[DevicePresenceOutput], BackfillScriptError>) { state.withLock { $0.answers.append(result) } }
    var calls: [Date] { state.withLock { $0.calls } }

    @Sendable func fetch(since: Date) async throws -> [DevicePresenceOutput] {
        let next = state.withLock { state -> Result<[DevicePresenceOutput], BackfillScriptError> in
            state.calls.append(since)
            return state.answers.isEmpty ? .success([]) : state.answers.removeFirst()
        }
        return try next.get()
    }
}

/// The failure a ``BackfillScript`` or ``GatedBackfill`` answers with.
struct BackfillScriptError: Error, CustomStringConvertible {
    var description: String { "HTTP 503" }
}
