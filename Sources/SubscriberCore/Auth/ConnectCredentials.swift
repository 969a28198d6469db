/// What the supervisor asks the ``AuthSession`` before each connection attempt: one call at a time, awaited for at most
/// a deadline.
///
/// An identity provider can take minutes to answer, or never answer: Amplify's `fetchAuthSession` "never ends"
/// (aws-amplify/amplify-android#2816) and "can take upwards of a minute to either complete or fail due to internal
/// retries" on spotty networks (aws-amplify/docs#4073). Without a deadline such a call held the transport in
/// `connecting` for good. With one, the attempt fails and the supervisor backs off and tries again. The next attempt
/// waits for the same call if it is still running rather than starting another, so a session that hangs and ignores
/// cancellation holds one task, not one per attempt. An answer that comes while nobody waits is not kept (it may be
/// old by the next attempt). The calls still running when the supervisor ends are cancelled.
package final class ConnectCredentials: Sendable {
    private struct Call: Sendable {
        let forceRefresh: Bool
        let answer: OneShotSignal<SendTimeCredentials>
        let task: Task<Void, Never>
    }

    private let auth: any AuthSession
    /// The calls not yet answered; the last is the newest.
    private let running = Locked<[Call]>([])

    package init(_ auth: any AuthSession) { self.auth = auth }

    /// The session's answer; `nil` if it gave none within `timeout` on `clock`; ``SendTimeCredentials/cancelled`` if
    /// the calling task is cancelled first.
    package func ask<C: Clock>(forceRefresh: Bool, timeout: Duration, clock: C) async -> SendTimeCredentials?
    where C.Duration == Duration {
        let answer = running.withLock { running -> OneShotSignal<SendTimeCredentials> in
            running.removeAll { $0.answer.isFired }
            // A forced refresh still running also serves an unforced ask; not the other way round. A call left behind
            // is not cancelled: someone may still wait for it.
            if let call = running.last, call.forceRefresh || !forceRefresh { return call.answer }
            let answer = OneShotSignal<SendTimeCredentials>()
            let task = Task { [auth] in _ = answer.fire(await auth.answer(forceRefresh: forceRefresh)) }
            running.append(Call(forceRefresh: forceRefresh, answer: answer, task: task))
            return answer
        }
        return await withDeadline(timeout, on: clock, mode: .awaitOperation) { await answer.wait() ?? .cancelled }
    }

    /// Cancels every call still running: nobody will ask again.
    package func cancel() {
        for call in running.withLock({ $0 }) { call.task.cancel() }
    }
}
