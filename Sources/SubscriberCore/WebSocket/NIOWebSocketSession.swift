import Foundation
import HTTPTypes
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket
import WSClient

/// The state shared by a connection, the WSClient handler and the task running WSClient.
///
/// WSClient calls our handler with the inbound stream and the outbound writer once the upgrade has succeeded; the
/// handler hands both over and suspends until the connection is done with them (`handlerExit`). Returning from the
/// handler lets WSClient finish the close handshake, after which `run()` returns the server's close frame.
final class NIOWebSocketSession: Sendable {
    /// Where the connection is in its life.
    private enum Phase {
        /// Waiting for the upgrade.
        case connecting
        /// Upgraded; messages flow both ways.
        case open
        /// ``close(code:reason:)`` has started; `frameSent` once our close frame is written.
        case closing(code: UInt16, reason: String, frameSent: Bool)
        /// The inbound stream ended (server close, EOF or error); waiting for `run()` to return.
        case ending
        /// `run()` returned (or the close was forced); every receive reports this.
        case finished(WebSocketCloseInfo)
    }

    /// How the suspended WSClient handler should return.
    private enum HandlerExit: Sendable {
        case normal
        case failed(any Error)
    }

    private typealias MessageIterator = WebSocketInboundMessageStream.AsyncIterator

    private struct State {
        var phase = Phase.connecting
        var outbound: WebSocketOutboundWriter?
        /// The single iterator over the inbound messages. `nil` while a `receive()` has it checked out, and for
        /// good once the stream ended or closing began. The iterator is not `Sendable`; it is only ever used by
        /// one `receive()` at a time (the seam's single-consumer contract, enforced by `readerActive`) and moved
        /// in and out of this lock-protected state, never shared.
        var iterator: MessageIterator?
        /// Whether a `receive()` is awaiting the iterator right now.
        var readerActive = false
        /// Why the inbound stream failed, kept for the close reason when `run()` itself reports nothing.
        var inboundError: (any Error)?
        /// Cancels the run task if a dropped connection does not finish in time; cancelled when `run()` returns.
        var dropWatchdog: Task<Void, Never>?
    }

    /// The logger given to the connector.
    let logger: Logger
    private let maxMessageSize: Int
    private let state = Locked(State())
    private let upgraded = WebSocketOneShot<Result<Void, any Error>>()
    private let handlerExit = WebSocketOneShot<HandlerExit>()
    private let finished = WebSocketOneShot<WebSocketCloseInfo>()

    init(maxMessageSize: Int, logger: Logger) {
        self.maxMessageSize = maxMessageSize
        self.logger = logger
    }

    /// Whether the connection has ended for good.
    var isFinished: Bool { finished.isFulfilled }

    // MARK: Connect

    /// Waits until the upgrade succeeded or failed.
    func upgradeOutcome() async -> Result<Void, any Error> {
        await upgraded.value
    }

    /// `connect` was cancelled: fail it now rather than waiting for NIO to notice.
    func abandonUpgrade() {
        upgraded.fulfill(.failure(CancellationError()))
    }

    /// The WSClient handler: takes over the streams, then suspends until the connection is finished with them.
    func serve(inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter) async throws {
        let iterator = inbound.messages(maxSize: maxMessageSize).makeAsyncIterator()
        state.withLock { state in
            state.outbound = outbound
            state.iterator = iterator
            if case .connecting = state.phase { state.phase = .open }
        }
        // If `connect` already gave up, nobody will ever use this connection: end it at once.
        guard upgraded.fulfill(.success(())) else { return }
        // Cancellation (the connection was dropped) ends the handler normally: WSClient then sends 1000.
        let exit = await withTaskCancellationHandler {
            await handlerExit.value
        } onCancel: {
            handlerExit.fulfill(.normal)
        }
        if case .failed(let error) = exit {
            // Rethrown so WSClient closes with the matching code (for example 1009 for an oversized message).
            throw error
        }
    }

    /// `run()` returned or threw: the connection is over.
    func runEnded(_ result: Result<WebSocketCloseFrame?, any Error>) {
        switch result {
        case .failure(let error):
            upgraded.fulfill(.failure(Self.seamError(for: error)))
        case .success:
            upgraded.fulfill(.failure(WebSocketSeamError.connectionFailed("the connection ended during the upgrade")))
        }
        let info = state.withLock { state -> WebSocketCloseInfo in
            switch state.phase {
            case .finished(let info):
                return info
            case .closing(let code, let reason, _):
                state.phase = .finished(WebSocketCloseInfo(code: code, reason: reason, initiatedLocally: true))
            case .connecting, .open, .ending:
                state.phase = .finished(Self.remoteCloseInfo(result, inboundError: state.inboundError))
            }
            state.outbound = nil
            state.iterator = nil
            state.dropWatchdog?.cancel()
            state.dropWatchdog = nil
            guard case .finished(let info) = state.phase else { preconditionFailure("phase was just set") }
            return info
        }
        handlerExit.fulfill(.normal)
        if finished.fulfill(info) {
            logger.debug("WebSocket closed", metadata: ["ws.close": "\(info)"])
        }
    }

    /// The connection object went away without `close`: let WSClient close normally, and cancel the run task if
    /// that takes longer than `deadline`. No receive() can be running (it would keep the connection alive).
    func connectionDropped(runTask: Task<Void, Never>, deadline: Duration) {
        guard !isFinished else { return }
        logger.debug("WebSocket connection dropped without close; closing it")
        let watchdog = Task { [logger] in
            do {
                try await Task.sleep(for: deadline)
            } catch {
                return  // run() ended in time
            }
            logger.debug("Dropped WebSocket did not close in time; cancelling it")
            runTask.cancel()
        }
        let alreadyEnded = state.withLock { state -> Bool in
            if case .finished = state.phase { return true }
            state.dropWatchdog = watchdog
            return false
        }
        if alreadyEnded { watchdog.cancel() }
        handlerExit.fulfill(.normal)
    }

    /// Ends the connection without waiting any longer for WSClient (the close watchdog fired).
    func finishLocally() {
        let info = state.withLock { state -> WebSocketCloseInfo in
            let info: WebSocketCloseInfo
            switch state.phase {
            case .finished(let existing):
                return existing
            case .closing(let code, let reason, _):
                info = WebSocketCloseInfo(code: code, reason: reason, initiatedLocally: true)
            case .connecting, .open, .ending:
                info = WebSocketCloseInfo(code: nil, reason: "closed before the connection finished", initiatedLocally: true)
            }
            state.phase = .finished(info)
            state.outbound = nil
            state.iterator = nil
            return info
        }
        handlerExit.fulfill(.normal)
        finished.fulfill(info)
    }

    // MARK: The seam

    func receive() async -> WebSocketInboundEvent {
        let checkedOut = state.withLock { state -> MessageIterator? in
            guard case .open = state.phase, !state.readerActive, let iterator = state.iterator else { return nil }
            state.iterator = nil
            state.readerActive = true
            return iterator
        }
        // Not open (closing, ended, finished): all that is left is the final close.
        guard var iterator = checkedOut else { return .closed(await finished.value) }

        // Reading only now is the backpressure: nothing is pulled from the socket before the caller asks.
        let outcome: Result<WebSocketInboundMessageStream.Element?, any Error>
        do {
            outcome = .success(try await iterator.next())
        } catch {
            outcome = .failure(error)
        }
        let exit = state.withLock { state -> HandlerExit? in
            state.readerActive = false
            switch outcome {
            case .success(.some):
                if case .open = state.phase {
                    state.iterator = iterator
                    return nil
                }
                // `close` is waiting for this read to end before it lets the handler return.
                if case .closing(_, _, true) = state.phase { return .normal }
                return nil
            case .success(.none):
                if case .open = state.phase { state.phase = .ending }
                return .normal
            case .failure(let error) where error is CancellationError || Task.isCancelled:
                // NIO ends the inbound stream for good when its reader is cancelled, so the connection cannot
                // go on: close it normally and report that this side ended it.
                if case .open = state.phase {
                    state.phase = .closing(code: 1000, reason: "receive() was cancelled", frameSent: true)
                }
                return .normal
            case .failure(let error):
                if case .open = state.phase { state.phase = .ending }
                state.inboundError = error
                return .failed(error)
            }
        }
        if let exit { handlerExit.fulfill(exit) }
        switch outcome {
        case .success(.text(let text)?):
            return .message(.text(text))
        case .success(.binary(let buffer)?):
            return .message(.binary(Data(buffer.readableBytesView)))
        case .success(.none), .failure:
            return .closed(await finished.value)
        }
    }

    func send(_ message: WebSocketMessage) async throws {
        let outbound = state.withLock { state -> WebSocketOutboundWriter? in
            guard case .open = state.phase else { return nil }
            return state.outbound
        }
        guard let outbound else { throw WebSocketSeamError.notConnected }
        do {
            // These split messages larger than maxFrameSize into continuation frames.
            switch message {
            case .text(let text):
                try await outbound.writeTextMessage(text)
            case .binary(let data):
                try await outbound.writeBinaryMessage(ByteBuffer(bytes: data))
            }
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            logger.debug("WebSocket send failed", metadata: ["ws.error": "\(error)"])
            throw WebSocketSeamError.notConnected
        }
    }

    func close(code: UInt16, reason: String) async {
        let outbound = state.withLock { state -> WebSocketOutboundWriter? in
            guard case .open = state.phase else { return nil }
            state.phase = .closing(code: code, reason: reason, frameSent: false)
            return state.outbound
        }
        if let outbound {
            logger.debug("Closing WebSocket", metadata: ["ws.close.code": "\(code)"])
            do {
                try await outbound.close(WebSocketErrorCode(codeNumber: Int(code)), reason: reason.isEmpty ? nil : reason)
            } catch {
                // The transport may already be gone; the connection ends either way.
                logger.debug("Sending the WebSocket close frame failed", metadata: ["ws.error": "\(error)"])
            }
            // A receive() still awaiting the iterator lets the handler go when its read ends (the server's
            // close frame ends it); otherwise nobody reads any more and the handler can return now, after which
            // WSClient waits for the server's close frame itself (bounded by its close timeout).
            let releaseNow = state.withLock { state -> Bool in
                if case .closing = state.phase {
                    state.phase = .closing(code: code, reason: reason, frameSent: true)
                }
                return !state.readerActive
            }
            if releaseNow { handlerExit.fulfill(.normal) }
        }
        _ = await finished.value
    }

    // MARK: Mapping

    /// The seam error for a failure of WSClient's `run()` before the upgrade completed.
    static func seamError(for error: any Error) -> any Error {
        switch error {
        case let error as WebSocketSeamError:
            return error
        case is CancellationError:
            return error
        case let error as WebSocketClientError where error == .webSocketUpgradeFailed:
            return WebSocketSeamError.upgradeRejected(
                "the server answered without switching protocols (\(error); WSClient does not expose the HTTP status)"
            )
        case let error as WebSocketClientError where error == .invalidURL:
            return WebSocketSeamError.invalidURL("\(error)")
        case let error as NIOHTTPClientUpgradeError:
            return WebSocketSeamError.upgradeRejected("invalid upgrade response: \(error)")
        default:
            return WebSocketSeamError.connectionFailed("\(error)")
        }
    }

    /// How the connection ended when this side did not start the close.
    private static func remoteCloseInfo(
        _ result: Result<WebSocketCloseFrame?, any Error>,
        inboundError: (any Error)?
    ) -> WebSocketCloseInfo {
        switch result {
        case .success(let frame?):
            return WebSocketCloseInfo(code: UInt16(webSocketErrorCode: frame.closeCode), reason: frame.reason ?? "")
        case .success(nil):
            if let inboundError { return WebSocketCloseInfo(code: nil, reason: "\(inboundError)") }
            return WebSocketCloseInfo(code: nil, reason: "connection closed without a close code")
        case .failure(let error):
            return WebSocketCloseInfo(code: nil, reason: "\(error)")
        }
    }
}
