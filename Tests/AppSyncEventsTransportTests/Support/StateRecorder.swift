import RealtimeTesting
import SubscriberCore

@testable import AppSyncEventsTransport

/// Records a transport's connection states in the background.
final class StateRecorder: Sendable {
    private let states = Locked<[ConnectionState]>([])
    private let task: Task<Void, Never>

    init(_ transport: AppSyncEventsTransport) async {
        let stream = await transport.connectionStates()
        let states = self.states
        task = Task { for await state in stream { states.withLock { $0.append(state) } } }
    }

    deinit { task.cancel() }

    var recorded: [ConnectionState] { states.withLock { $0 } }

    /// Waits until `state` has been recorded.
    func waitFor(_ state: ConnectionState, timeout: Double = scriptedWait) async throws {
        try await withTestTimeout(timeout, "state \(state)") { [states] in
            while !states.withLock({ $0.contains(state) }) { try await TestTime.pollPause() }
        }
    }
}
