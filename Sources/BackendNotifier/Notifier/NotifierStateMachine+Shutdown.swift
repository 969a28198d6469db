import Foundation

// What the machine answers once shut down: every operation returns at once, and nothing else changes.
extension NotifierStateMachine {
    /// After shutdown every operation returns at once and nothing else changes.
    mutating func afterShutdown(_ event: Event) {
        switch event {
        case .updateRequested(let identity, let operation): answerAfterShutdown(.update(identity, operation: operation))
        case .switchRequested(let target, let reason, let only, let operation):
            answerAfterShutdown(.switchTransport(target, reason, onlyFromOtherDialect: only, operation: operation))
        case .enteredForeground(let operation): answerAfterShutdown(.resume(operation: operation))
        default: break
        }
    }

    mutating func answerAfterShutdown(_ queued: Queued) {
        switch queued {
        case .update(_, let operation), .resume(let operation): act(.completeOperation(operation))
        case .switchTransport(let target, _, _, let operation):
            act(.forgetTransport(target.id))
            act(.failOperation(operation, .disconnected))
        case .suspend: break
        }
    }
}
