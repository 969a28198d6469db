#if os(Linux) || os(Android)
import CTimerFD
import NIOCore
import NIOPosix
import SubscriberCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Android)
import Android
#endif

/// A link's own kernel timer (`timerfd`) on its connection's event loop: the loop reads its expiry like any descriptor,
/// and ``reschedule(after:)`` re-arms it with `timerfd_settime` from the thread that saw the sign of life.
///
/// NIO's scheduled tasks cannot do this: the loop arms its one kernel timer for the earliest deadline it was given and
/// only ever moves it earlier, so a cancelled task's deadline still wakes the thread. An idle AppSync link postpones
/// its deadline twice a minute (the pong and the `ka` each move the next ping 30 s on); each of those was a wake for
/// nothing.
///
/// The descriptor is duplicated: NIO owns and closes the copy it reads, this timer arms and closes its own, so a re-arm
/// can never reach a descriptor number that the closed channel gave back. When the channel ends on its own, sleeps
/// fall back to the loop's scheduled tasks.
final class TimerFDLinkTimer: LinkTimer {
    private struct State {
        /// The descriptor this timer arms; `nil` once closed or once the loop stopped reading the copy.
        var descriptor: CInt?
        /// The sleep waiting, with its number: a cancellation ends only its own sleep.
        var waiter: (sleep: Int, continuation: CheckedContinuation<Void, any Error>)?
        var sleeps = 0
        var channel: (any Channel)?
    }

    private let eventLoop: any EventLoop
    private let state: Locked<State>

    private init(descriptor: CInt, eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
        self.state = Locked(State(descriptor: descriptor))
    }

    /// A timer registered on `eventLoop`, or `nil` if the kernel or the loop refused one (the link then sleeps on the
    /// loop's scheduled tasks).
    static func make(on eventLoop: any EventLoop) async -> TimerFDLinkTimer? {
        let descriptor = timerfd_create(CLOCK_MONOTONIC, CInt(TFD_NONBLOCK) | CInt(TFD_CLOEXEC))
        guard descriptor >= 0 else { return nil }
        let readCopy = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
        guard readCopy >= 0 else {
            _ = Self.closeDescriptor(descriptor)
            return nil
        }
        let timer = TimerFDLinkTimer(descriptor: descriptor, eventLoop: eventLoop)
        // Whether NIO made a channel of the copy: from then on a failure closes the channel, and the copy with it.
        let handedOver = Locked(false)
        do {
            let channel = try await NIOPipeBootstrap(group: eventLoop)
                .channelInitializer { channel in
                    handedOver.withLock { $0 = true }
                    return channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(ExpiryHandler(timer: timer))
                    }
                }
                .takingOwnershipOfDescriptor(input: readCopy)
                .get()
            timer.state.withLock { $0.channel = channel }
        } catch {
            // NIO gives the copy back only when it failed before making a channel of it (the descriptor check, the
            // channel's creation). A failure after that (this initializer, the registration) closes the channel and the
            // copy: closing it again could close a descriptor another thread has just been given the number of.
            if !handedOver.withLock({ $0 }) { _ = Self.closeDescriptor(readCopy) }
            timer.close()
            return nil
        }
        return timer
    }

    func sleep(for duration: Duration) async throws {
        try Task.checkCancellation()
        guard state.withLock({ $0.descriptor != nil }) else {
            return try await EventLoopLinkExecutor.sleep(on: eventLoop, for: duration)
        }
        let sleep = state.withLock { state in
            state.sleeps += 1
            return state.sleeps
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let previous = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                    guard let descriptor = state.descriptor else { return continuation }  // closed meanwhile: return
                    let previous = state.waiter?.continuation
                    state.waiter = (sleep, continuation)
                    Self.arm(descriptor, after: duration)
                    return previous
                }
                previous?.resume()  // one sleeper at a time; a second one takes over (the caller reads its deadline again)
                // A cancel that came before the waiter was stored found nothing to resume.
                if Task.isCancelled { cancel(sleep) }
            }
        } onCancel: {
            cancel(sleep)
        }
    }

    /// Whether a sleep waits for the timer (for tests).
    var hasSleeper: Bool { waitingSleep != nil }

    /// The number of the sleep waiting for the timer, counting from 1 (for tests).
    var waitingSleep: Int? { state.withLock { $0.waiter?.sleep } }

    func reschedule(after duration: Duration) {
        state.withLock { state in
            guard let descriptor = state.descriptor else { return }
            Self.arm(descriptor, after: duration)
        }
    }

    func close() {
        let (waiter, channel) = state.withLock { state in
            if let descriptor = state.descriptor { _ = Self.closeDescriptor(descriptor) }
            state.descriptor = nil
            defer { state.waiter = nil }
            return (state.waiter?.continuation, state.channel)
        }
        waiter?.resume()
        channel?.close(promise: nil)
    }

    /// The timer expired (on the loop): the sleeper wakes.
    fileprivate func expired() {
        state.withLock { state in
            defer { state.waiter = nil }
            return state.waiter?.continuation
        }?.resume()
    }

    /// The loop no longer reads the timer: release it; the sleeper returns early and later sleeps use the loop's.
    fileprivate func stoppedReading() {
        close()
    }

    /// Ends sleep number `sleep` with `CancellationError` if it still waits (not a later one), and disarms the timer.
    private func cancel(_ sleep: Int) {
        state.withLock { state -> CheckedContinuation<Void, any Error>? in
            guard let waiter = state.waiter, waiter.sleep == sleep else { return nil }
            state.waiter = nil
            if let descriptor = state.descriptor { Self.disarm(descriptor) }
            return waiter.continuation
        }?.resume(throwing: CancellationError())
    }

    private static func arm(_ descriptor: CInt, after duration: Duration) {
        // Zero disarms a timerfd: the shortest real wait is a nanosecond.
        let (seconds, attoseconds) = max(duration, .nanoseconds(1)).components
        var value = itimerspec(
            it_interval: timespec(tv_sec: 0, tv_nsec: 0),
            it_value: timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000)))
        _ = timerfd_settime(descriptor, 0, &value, nil)
    }

    private static func disarm(_ descriptor: CInt) {
        var value = itimerspec(it_interval: timespec(tv_sec: 0, tv_nsec: 0), it_value: timespec(tv_sec: 0, tv_nsec: 0))
        _ = timerfd_settime(descriptor, 0, &value, nil)
    }

    private static func closeDescriptor(_ descriptor: CInt) -> CInt {
        #if canImport(Glibc)
        Glibc.close(descriptor)
        #elseif canImport(Musl)
        Musl.close(descriptor)
        #else
        Android.close(descriptor)
        #endif
    }
}

/// Reads the timer's expirations on the loop (the count does not matter) and reports them and the channel's end.
private final class ExpiryHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let timer: TimerFDLinkTimer

    init(timer: TimerFDLinkTimer) {
        self.timer = timer
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        timer.expired()
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer.stoppedReading()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
#endif
